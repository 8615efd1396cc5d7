// SPDX-License-Identifier: Apache-2.0
// The worker: the only process that touches the GPU. It opens a fresh context, starts CUPTI
// before loading any module, and for each item checks numerics and proof, then samples both
// sides. It writes {"event":"begin"} before and {"event":"result"} after each item on `out`.
#pragma once
#include <iosfwd>

#include "portbench/measure/job.hpp"

namespace portbench::measure {

/// Exit code after a CUDA error that poisoned the context: the orchestrator starts a fresh
/// worker for the items left.
inline constexpr int k_worker_exit_context_lost = 3;

/// Runs the job; returns the process exit code (0, or k_worker_exit_context_lost).
int run_worker(const job& j, std::ostream& out);

}  // namespace portbench::measure
