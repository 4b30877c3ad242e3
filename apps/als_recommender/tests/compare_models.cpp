// compare_models A.h5 B.h5 TOLERANCE: ||A - B|| / ||B|| over both factor matrices of two als models
// (the same users and items); prints it and exits 0 when it is below TOLERANCE, 1 above, 2 on errors.
// Used by test_mpi.sh to compare mpirun -np N with one process.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "model.hpp"

int main(int argc, char** argv) {
    if (argc != 4) return std::cerr << "usage: compare_models A.h5 B.h5 TOLERANCE\n", 2;
    try {
        const als::Model a = als::read_model(argv[1]), b = als::read_model(argv[2]);
        if (a.user_factors.size() != b.user_factors.size() || a.item_factors.size() != b.item_factors.size())
            return std::cerr << "compare_models: the models differ in shape\n", 2;
        double d = 0, n = 0;
        for (auto side : {&als::Model::user_factors, &als::Model::item_factors})
            for (std::size_t e = 0; e < (a.*side).size(); ++e)
                d += std::pow(double((a.*side)[e]) - (b.*side)[e], 2), n += std::pow(double((b.*side)[e]), 2);
        const double rel = std::sqrt(d / std::max(n, 1e-300)), tol = std::atof(argv[3]);
        std::printf("relative difference %.3g (tolerance %.3g): %s\n", rel, tol, rel < tol ? "ok" : "FAILED");
        return rel < tol ? 0 : 1;
    } catch (const std::exception& e) {
        std::cerr << "compare_models: " << e.what() << "\n";
        return 2;
    }
}
