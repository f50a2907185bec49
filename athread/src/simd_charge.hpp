// Charging of the vector instructions the C++ simd.h types count (see simd_charge.cpp).
#pragma once

namespace ldmsim {
class Core;
}

namespace ldmsim::athread {

/// Charges the vector work counted since the last call to `core` and resets the counts.
void charge_simd_work(Core& core);
/// Drops counted work that belongs to no core (host code, a launch that trapped).
void forget_simd_work();

}  // namespace ldmsim::athread
