// Locking the device clock for a benchmark: opt-in only (`--lock-frequency`),
// never done by the tests, and undone afterwards where the vendor tool can.
//   cuda: nvidia-smi -i <uuid> --lock-gpu-clocks=F,F, F the device's default
//         applications graphics clock (queried, not hard-coded); undone with
//         --reset-gpu-clocks. Needs root.
//   npu:  drv_hlt_dsmi_test set_lp_idle <index> 0 (the seed's A5 lock).
// Neither was run here: the shared H200 must keep its settings, and there
// is no Ascend device.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "runner/common/status.h"

namespace opverify {

// `device` is the executor environment's "device" section. Returns what was
// done ("locked GPU-... at 1785 MHz"), or why it could not be.
Result<std::string> LockDeviceClock(const nlohmann::json& device);
// Best effort; what happened, for the log.
std::string UnlockDeviceClock(const nlohmann::json& device);

}  // namespace opverify
