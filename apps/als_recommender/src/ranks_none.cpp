// RankGroup in a build without MPI (ranks.hpp): one process; refuses to run as several mpirun ranks.
#include <cstdlib>

#include "ranks.hpp"

namespace als {

std::unique_ptr<RankGroup> start_ranks(int*, char***) {
    for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})
        if (const char* size = std::getenv(name); size != nullptr && std::atoi(size) > 1)
            throw Error("started by mpirun with " + std::string(size) +
                        " ranks, but this als was built without MPI (install libopenmpi-dev and reconfigure)");
    return nullptr;
}

}  // namespace als
