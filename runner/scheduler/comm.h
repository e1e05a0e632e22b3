// Messages between ranks: the one place MPI is called. A Comm moves tagged
// byte strings between endpoints; MpiComm uses MPI_COMM_WORLD, LocalComms
// connect endpoints inside one process (threads): rank 0's own worker, and
// the coordinator's unit tests (tests/unit/coordinator_test.cc).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runner/common/status.h"

namespace opverify {

struct Message {
  int source = -1;
  int tag = 0;
  std::string payload;
};

class Comm {
 public:
  virtual ~Comm() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual Status Send(int dest, int tag, const std::string& payload) = 0;
  // The next message from any source, waiting at most timeout_s (0: poll).
  virtual std::optional<Message> Receive(double timeout_s) = 0;
  virtual void Barrier() = 0;
};

// link->Send, a failure logged with what the message was for (`what`), the
// tag and both ranks; returns whether it was sent. For the scheduler's own
// messages, whose sender has no one else to tell.
bool SendOrLog(Comm* link, int dest, int tag, const std::string& payload, const char* what);

// Initialises MPI (thread level FUNNELED: only the calling thread uses MPI)
// and finalises it when the last MpiComm is destroyed.
Result<std::unique_ptr<Comm>> MakeMpiComm(int* argc, char*** argv);

// n endpoints of one in-process world, ranks 0..n-1, each usable from its own thread.
std::vector<std::unique_ptr<Comm>> MakeLocalComms(int n);

}  // namespace opverify
