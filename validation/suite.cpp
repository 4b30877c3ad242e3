// The families' names, their peers, and how their rows are printed and written (suite.hpp).
#include "suite.hpp"

#include <cstdio>

namespace batchsolve::validation::suite {

std::string family_of(const std::string& routine) {
    if (routine == "potrf_large" || routine == "potrs_large" || routine == "posv_mixed") return "large";
    if (routine == "sytrf_nopiv" || routine == "sysv_mixed") return "ldlt";
    if (routine == "trsm_vbatched" || routine == "trmm_vbatched" || routine == "potrf_vbatched") return "triangular";
    if (routine == "gemm_vbatched" || routine == "syrk_vbatched" || routine == "syr2k_vbatched" || routine == "symm_vbatched")
        return "vbatched";
    if (routine == "multi_posv" || routine == "multi_gesv") return "multi";
    return "";
}

std::vector<std::string> peers_of(const std::string& routine) {
    const std::string f = family_of(routine);
    if (f == "large") return routine == "posv_mixed" ? std::vector<std::string>{"cusolver", "cusolver-irs", "cusolver-dsgesv",
                                                                                 "cusolver-dhgesv", "cusolver-dbgesv",
                                                                                 "cusolver-dxgesv", "cusolver-irs-gmres"}
                                                     : std::vector<std::string>{"cusolver", "lapack", "cpu"};
    if (f == "ldlt") return {"cusolver"};
    if (f == "vbatched") return routine == "gemm_vbatched" ? std::vector<std::string>{"cublas-grouped", "cublas", "cpu"}
                                                           : std::vector<std::string>{"cublas", "cpu"};
    if (f == "triangular") return routine == "potrf_vbatched" ? std::vector<std::string>{"cusolver", "cpu"}
               : routine == "trsm_vbatched" ? std::vector<std::string>{"cublas", "cublas-streams", "cpu"}
                                            : std::vector<std::string>{"cublas", "cpu"};
    if (f == "multi") return {"one-device"};
    return {};
}

}  // namespace batchsolve::validation::suite
