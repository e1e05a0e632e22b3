// How long a test's step took, on the steady clock.
#pragma once

#include <chrono>

namespace opverify::testing {

inline double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace opverify::testing
