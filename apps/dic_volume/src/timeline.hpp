// The phases of one dvc process (`dvc correlate --timeline FILE`): each event's time in seconds
// since the process started, so that what happens outside the stages (loading the shared libraries
// before main, starting the GPU context, freeing memory and the context after the outputs) stands
// beside the stage times. The process's start is the kernel's record of it (/proc/self/stat,
// 10 ms resolution); the time after main returns is the caller's wall time less "main_returned".
#pragma once

#include <functional>
#include <string>

namespace dvc::timeline {

// Seconds since the process started (0 where /proc is not readable).
double process_age_s();

// Records `event` at the current time (thread-safe; a few dozen per process).
void mark(const std::string& event);

// The events are to be written as JSON text by `writer` (the command's checked output) when
// write_if_requested() runs.
void request(std::function<void(const std::string& json)> writer);

// Writes the recorded events (main calls it last, after every destructor of the command ran).
void write_if_requested();

}  // namespace dvc::timeline
