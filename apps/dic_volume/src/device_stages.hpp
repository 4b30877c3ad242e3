// The GPU engine's volume stages (device_stages.cu): upload, Gaussian pre-smoothing, B-spline
// prefilter, spline gradients, pyramid downsampling and the cuFFT integer shift search. Every
// function works on device buffers of one volume (z, y, x; x fastest) and queues its work on
// `stream`; the per-voxel and per-line arithmetic is volume_math.hpp's, shared with the CPU.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "initial_guess.hpp"
#include "volume.hpp"

namespace dvc::device {

// Host-to-device copy of `count` floats through two pinned staging buffers (the host fills one
// while the other's DMA runs); returns when the copy is complete. The buffers are the process's,
// made by the first upload or by reserve_upload_staging() ahead of it, sized then for volumes of
// `volume_floats` (0: not known; upload_chunk_bytes).
void upload(float* dst, const float* host, std::size_t count, cudaStream_t stream);
void reserve_upload_staging(std::size_t volume_floats = 0);
// Bytes of one staging buffer for volumes of `volume_floats`: an eighth of a volume, within
// 2..16 MiB (the whole 16 MiB only pays for volumes of 128 MiB and more).
std::size_t upload_chunk_bytes(std::size_t volume_floats);
// The same from a raw file (Volume::unread): the staging buffers are filled by reading the file on
// several threads, so the samples never sit in host memory of their own.
void upload_raw(float* dst, const RawFile& file, cudaStream_t stream);
// Loads cuFFT (dlopen: it is not linked) if it is not loaded yet; errors are left to its first use.
void preload_libraries();

// Separable Gaussian (volume_math.hpp's taps, mirrored borders) in place; `scratch` holds a volume.
void gaussian_smooth(float* v, float* scratch, const Dims& dims, double sigma, cudaStream_t stream);

// Spline coefficients (B-spline degree 3 or 5, or kOmomsPrefilter) in place (axes x, y, z in turn as on the CPU; one thread
// per line, the x axis through a transposed copy in `scratch` so that every pass is coalesced).
void bspline_prefilter(float* v, float* scratch, const Dims& dims, int degree, cudaStream_t stream);

// Gradient of the image at every voxel (volume_math.hpp's gradient_at) from `src` (cubic: the
// coefficients, trilinear: the samples).
void gradients(const float* src, const Dims& dims, bool cubic, float* gz, float* gy, float* gx, cudaStream_t stream);

// 2x2x2 block means into `coarse` (dims floor(n / 2)).
void downsample2(const float* fine, const Dims& fine_dims, float* coarse, cudaStream_t stream);

// Bytes of device memory the shift search of `points` windows would hold at once (its chunk).
std::size_t shift_search_bytes(int subset, int radius, std::size_t points);
// Makes (and keeps for the process) the cuFFT plans that fft_shift_search of `points` points with
// this subset and radius will use, so that they can be made beside other work.
void make_shift_search_plans(int subset, int radius, std::size_t points);

// The integer shift search of initial_guess.hpp on the device: batched cuFFT cross-correlation of
// the windows of a chunk of points at a time, the zero-normalised score from box sums of the
// deformed window, the best admissible shift per point. Same result as fft_shift_search on the
// CPU up to ties of the float correlation. `peak_bytes` receives the device memory it held;
// `plan_s`, where given, gains the seconds spent making cuFFT plans (kept for later calls).
std::vector<std::int32_t> fft_shift_search(const float* ref, const float* def, const Dims& dims, const ShiftSearch& search,
                                           cudaStream_t stream, std::size_t* peak_bytes, double* plan_s = nullptr);

}  // namespace dvc::device
