// The families' names, their peers, and how their rows are printed and written (suite.hpp).
#include "suite.hpp"

#include <cstdio>

namespace batchsolve::validation::suite {

std::string family_of(const std::string& routine) {
    if (routine == "potrf_large" || routine == "potrs_large" || routine == "posv_mixed") return "large";
    if (routine == "sytrf_nopiv" || routine == "sysv_mixed") return "ldlt";
    return "";
}

std::vector<std::string> peers_of(const std::string& routine) {
    const std::string f = family_of(routine);
    if (f == "large") return routine == "posv_mixed" ? std::vector<std::string>{"cusolver"}
                                                     : std::vector<std::string>{"cusolver", "lapack", "cpu"};
    if (f == "ldlt") return {"cusolver"};
    if (f == "vbatched") return {"cublas-grouped", "cublas", "cpu"};
    if (f == "triangular") return routine == "potrf_vbatched" ? std::vector<std::string>{"cusolver", "cpu"}
                                                              : std::vector<std::string>{"cublas", "cpu"};
    if (f == "multi") return {"one-device"};
    return {};
}

}  // namespace batchsolve::validation::suite
