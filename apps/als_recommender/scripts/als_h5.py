"""Reading and writing the ALS recommender's HDF5 ratings files from Python (schema: the app's README),
shared by the comparison scripts."""
import h5py
import numpy as np
import scipy.sparse as sp


def read_ratings(path):
    """Returns (users x items CSR float32, user ids, item ids, feedback)."""
    with h5py.File(path, "r") as f:
        if f.attrs.get("format") not in ("als-ratings", b"als-ratings"):
            raise SystemExit(f"{path}: not an ALS ratings file")
        users = [s.decode() if isinstance(s, bytes) else s for s in f["users/ids"][()]]
        items = [s.decode() if isinstance(s, bytes) else s for s in f["items/ids"][()]]
        m = sp.csr_matrix((f["by_user/values"][()], f["by_user/indices"][()], f["by_user/indptr"][()]),
                          shape=(len(users), len(items)), dtype=np.float32)
        feedback = f.attrs["feedback"]
        return m, users, items, feedback.decode() if isinstance(feedback, bytes) else feedback


def write_ratings(path, m, users, items, feedback, provenance):
    """Writes a users x items CSR (rows sorted, no repeats) with its id lists."""
    m = sp.csr_matrix(m, dtype=np.float32)
    m.sort_indices()
    t = m.T.tocsr()
    t.sort_indices()
    with h5py.File(path, "w") as f:
        f.attrs["format"] = "als-ratings"
        f.attrs["version"] = np.int64(1)
        f.attrs["feedback"] = feedback
        f.attrs["provenance"] = provenance
        f.attrs["command"] = provenance
        f.attrs["users"] = np.int64(m.shape[0])
        f.attrs["items"] = np.int64(m.shape[1])
        f.attrs["interactions"] = np.int64(m.nnz)
        s = h5py.string_dtype("utf-8")
        f.create_dataset("users/ids", data=np.array(users, dtype=object), dtype=s)
        f.create_dataset("items/ids", data=np.array(items, dtype=object), dtype=s)
        for group, x in (("by_user", m), ("by_item", t)):
            f.create_dataset(f"{group}/indptr", data=x.indptr.astype(np.int64))
            f.create_dataset(f"{group}/indices", data=x.indices.astype(np.int32))
            f.create_dataset(f"{group}/values", data=x.data.astype(np.float32))
            f[group].attrs["rows"] = np.int64(x.shape[0])
            f[group].attrs["cols"] = np.int64(x.shape[1])


def read_model_factors(path):
    """(user factors, item factors) of an ALS model file."""
    with h5py.File(path, "r") as f:
        return f["users/factors"][()], f["items/factors"][()]
