#include "runner/scheduler/comm.h"

#include <mpi.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

namespace opverify {
namespace {

class MpiComm : public Comm {
 public:
  MpiComm() {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  ~MpiComm() override { MPI_Finalize(); }

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  Status Send(int dest, int tag, const std::string& payload) override {
    const int rc = MPI_Send(payload.data(), static_cast<int>(payload.size()), MPI_CHAR, dest, tag, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS) return Status::IoError("MPI_Send to rank " + std::to_string(dest) + " failed");
    return Status::Ok();
  }

  std::optional<Message> Receive(double timeout_s) override {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    for (;;) {
      int ready = 0;
      MPI_Status status;
      MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &ready, &status);
      if (ready) {
        int count = 0;
        MPI_Get_count(&status, MPI_CHAR, &count);
        Message m;
        m.source = status.MPI_SOURCE;
        m.tag = status.MPI_TAG;
        m.payload.resize(static_cast<std::size_t>(count));
        MPI_Recv(m.payload.data(), count, MPI_CHAR, status.MPI_SOURCE, status.MPI_TAG, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
        return m;
      }
      if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
      // Polling keeps MPI on this one thread; 1 ms costs nothing against cases of milliseconds or more.
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }

  void Barrier() override { MPI_Barrier(MPI_COMM_WORLD); }

 private:
  int rank_ = 0;
  int size_ = 1;
};

// The shared state of an in-process world: one mailbox per rank.
struct LocalWorld {
  struct Mailbox {
    std::mutex mutex;
    std::condition_variable arrived;
    std::deque<Message> messages;
  };
  explicit LocalWorld(int n) : mailboxes(static_cast<std::size_t>(n)) {}
  std::vector<Mailbox> mailboxes;
  std::mutex barrier_mutex;
  std::condition_variable barrier_cv;
  int barrier_waiting = 0;
  int barrier_generation = 0;
};

class LocalComm : public Comm {
 public:
  LocalComm(std::shared_ptr<LocalWorld> world, int rank) : world_(std::move(world)), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return static_cast<int>(world_->mailboxes.size()); }

  Status Send(int dest, int tag, const std::string& payload) override {
    if (dest < 0 || dest >= size()) return Status::InvalidInput("no rank " + std::to_string(dest));
    auto& box = world_->mailboxes[static_cast<std::size_t>(dest)];
    {
      std::lock_guard<std::mutex> lock(box.mutex);
      box.messages.push_back({rank_, tag, payload});
    }
    box.arrived.notify_one();
    return Status::Ok();
  }

  std::optional<Message> Receive(double timeout_s) override {
    auto& box = world_->mailboxes[static_cast<std::size_t>(rank_)];
    std::unique_lock<std::mutex> lock(box.mutex);
    if (!box.arrived.wait_for(lock, std::chrono::duration<double>(timeout_s),
                              [&] { return !box.messages.empty(); })) {
      return std::nullopt;
    }
    Message m = std::move(box.messages.front());
    box.messages.pop_front();
    return m;
  }

  void Barrier() override {
    std::unique_lock<std::mutex> lock(world_->barrier_mutex);
    const int generation = world_->barrier_generation;
    if (++world_->barrier_waiting == size()) {
      world_->barrier_waiting = 0;
      ++world_->barrier_generation;
      world_->barrier_cv.notify_all();
      return;
    }
    world_->barrier_cv.wait(lock, [&] { return world_->barrier_generation != generation; });
  }

 private:
  std::shared_ptr<LocalWorld> world_;
  int rank_;
};

}  // namespace

Result<std::unique_ptr<Comm>> MakeMpiComm(int* argc, char*** argv) {
  int provided = 0;
  if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
    return Status::Internal("MPI_Init_thread failed");
  }
  if (provided < MPI_THREAD_FUNNELED) {
    MPI_Finalize();
    return Status::Unsupported("this MPI does not provide MPI_THREAD_FUNNELED");
  }
  return std::unique_ptr<Comm>(new MpiComm());
}

std::vector<std::unique_ptr<Comm>> MakeLocalComms(int n) {
  auto world = std::make_shared<LocalWorld>(n);
  std::vector<std::unique_ptr<Comm>> comms;
  for (int r = 0; r < n; ++r) comms.push_back(std::make_unique<LocalComm>(world, r));
  return comms;
}

bool SendOrLog(Comm* link, int dest, int tag, const std::string& payload, const char* what) {
  const Status sent = link->Send(dest, tag, payload);
  if (!sent.ok()) {
    spdlog::error("rank {}: sending {} (tag {}) to rank {} failed: {}", link->rank(), what, tag, dest,
                  sent.message());
  }
  return sent.ok();
}

}  // namespace opverify
