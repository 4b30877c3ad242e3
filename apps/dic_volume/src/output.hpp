// Result files of `dvc correlate`: the HDF5 file (schema in README.md), VTK XML image data (.vti)
// and unstructured points (.vtu) that ParaView opens, and a PNG slice for a quick look.
#pragma once

#include <string>
#include <vector>

#include "batchsolve_io/hdf5.hpp"
#include "correlate.hpp"
#include "generate.hpp"
#include "strain.hpp"

namespace dvc {

struct RunDescription {
    std::string reference, deformed;  // input names as given
    CorrelationOptions options;
    std::string command_line;
};

// Errors against a known field (per point, z y x), filled when the pair carries its truth.
struct TruthComparison {
    bool present = false;
    DisplacementField field;
    std::vector<double> displacement;  // 3 per point
    std::vector<double> error;         // measured - true, 3 per point
};
TruthComparison compare_with_truth(const CorrelationResult& r, const DisplacementField& field);

// `mode`: direct (default) builds the file in its temporary on disk, each array written straight
// from memory; image builds it in memory and writes it at the end (the earlier way, kept to compare).
void write_results_h5(const std::string& path, bool force, const std::vector<std::string>& inputs, const CorrelationResult& r,
                      const FieldStrain& field_strain, const TruthComparison& truth, const RunDescription& run,
                      batchsolve::io::h5::WriteMode mode = batchsolve::io::h5::WriteMode::direct);
// The text and PNG writers go through batchsolve::io::OutputStream (checked temporary renamed over
// the target; `rules`: --force and the run's inputs); the default replaces an existing file.
void write_vti(const std::string& path, const CorrelationResult& r, const FieldStrain& field_strain,
               const batchsolve::io::OutputOptions& rules = {});
void write_vtu(const std::string& path, const CorrelationResult& r, const FieldStrain& field_strain,
               const batchsolve::io::OutputOptions& rules = {});
// A z slice of the grid (index `slice`, -1: middle): displacement component `component` (0 z, 1
// y, 2 x, 3 magnitude) beside ZNCC, each grid point a square of `scale` pixels; points that did not
// converge are grey. Colour maps span the converged points' range (printed by the caller).
struct SliceRange {
    double lo = 0, hi = 0, zncc_lo = 0, zncc_hi = 1;
    std::int64_t slice = 0;
};
SliceRange write_slice_png(const std::string& path, const CorrelationResult& r, int component, std::int64_t slice, int scale,
                           const batchsolve::io::OutputOptions& rules = {});

// A minimal PNG writer (8-bit RGB, zlib), for the slice plot.
void write_png_rgb(const std::string& path, int width, int height, const std::vector<unsigned char>& rgb,
                   const batchsolve::io::OutputOptions& rules = {});

// Deformation field description as HDF5 attributes of `group` and back.
void write_field_attributes(batchsolve::io::h5::File& file, const std::string& group, const DisplacementField& f);
DisplacementField read_field_attributes(const batchsolve::io::h5::File& file, const std::string& group);

}  // namespace dvc
