// Host entry points to the GPU engine's volume stages (device_stages.hpp) for the tests: host
// volumes in, host results out, no CUDA types. Without CUDA (icgn_stub.cpp) gpu_stages_available()
// is false and the others throw Error.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "initial_guess.hpp"
#include "volume.hpp"

namespace dvc {

bool gpu_stages_available();  // built with CUDA and a device is present
Volume gpu_stage_prefilter(const Volume& v, int degree);
Volume gpu_stage_smooth(const Volume& v, double sigma);
std::array<Volume, 3> gpu_stage_gradients(const Volume& src, bool cubic);
Volume gpu_stage_downsample(const Volume& v);
std::vector<std::int32_t> gpu_stage_shift_search(const Volume& reference, const Volume& deformed, const ShiftSearch& search);

}  // namespace dvc
