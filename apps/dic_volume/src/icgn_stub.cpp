// Stand-in for icgn_cuda.cu in builds without CUDA: asking for the GPU engine is a clear error.
#include "icgn.hpp"

namespace dvc {

std::unique_ptr<IcgnEngine> make_cuda_icgn_engine(const Volume&, const Volume&, const IcgnSettings&, batchsolve::Context&,
                                                  IcgnTimings&) {
    throw Error("the GPU IC-GN engine: this dvc was built without CUDA (configure with BATCHSOLVE_CUDA=ON)");
}

}  // namespace dvc
