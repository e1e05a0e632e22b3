// Length-prefixed messages over real pipes: through a real child (/bin/cat
// passes the framing through unchanged), with deadlines, a writer that closes
// before or in the middle of a message, and a reader that has gone.
#include "runner/process/channel.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "runner/process/subprocess.h"
#include "tests/support/seconds_since.h"

namespace opverify {
namespace {

using Clock = std::chrono::steady_clock;

using testing::SecondsSince;

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// A pipe whose ends close when the test ends.
struct TestPipe {
  TestPipe() {
    Result<Pipe> made = MakePipe();
    EXPECT_TRUE(made.ok()) << made.status().ToString();
    if (made.ok()) ends = made.value();
  }
  ~TestPipe() {
    CloseFd(&ends.read_fd);
    CloseFd(&ends.write_fd);
  }
  void Write(const std::string& bytes) const {
    ASSERT_EQ(write(ends.write_fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  }
  Pipe ends;
};

TEST(ChannelTest, PipeEndsCloseOnExecAndCloseFdForgetsThem) {
  TestPipe pipe;
  EXPECT_TRUE(fcntl(pipe.ends.read_fd, F_GETFD) & FD_CLOEXEC);
  EXPECT_TRUE(fcntl(pipe.ends.write_fd, F_GETFD) & FD_CLOEXEC);
  const int fd = pipe.ends.read_fd;
  CloseFd(&pipe.ends.read_fd);
  EXPECT_EQ(pipe.ends.read_fd, -1);
  EXPECT_EQ(fcntl(fd, F_GETFD), -1);
  CloseFd(&pipe.ends.read_fd);  // -1: nothing to do
}

TEST(ChannelTest, MessagesRoundTripThroughACatChild) {
  TestPipe to_cat;
  TestPipe from_cat;
  SpawnOptions options;
  options.argv = {"/bin/cat"};
  options.fds = {{to_cat.ends.read_fd, 0}, {from_cat.ends.write_fd, 1}};
  Result<Subprocess> cat = Subprocess::Spawn(options);
  ASSERT_TRUE(cat.ok()) << cat.status().ToString();
  CloseFd(&to_cat.ends.read_fd);
  CloseFd(&from_cat.ends.write_fd);

  std::string large(std::size_t{64} << 20, '\0');
  for (std::size_t i = 0; i < large.size(); ++i) large[i] = static_cast<char>(i * 7 + i / 4096);
  const std::vector<std::string> messages = {"", "hello", std::string("\0\xff\n", 3), large, "bye"};
  // cat writes while it reads: the parent sends on one thread and receives on another.
  std::thread sender([&] {
    for (const std::string& message : messages) {
      const Status sent = SendMessage(to_cat.ends.write_fd, message, 30.0);
      EXPECT_TRUE(sent.ok()) << sent.ToString();
    }
    CloseFd(&to_cat.ends.write_fd);
  });
  for (const std::string& expected : messages) {
    Received received = ReceiveMessage(from_cat.ends.read_fd, 30.0);
    ASSERT_TRUE(received.ok) << received.detail;
    ASSERT_EQ(received.message.size(), expected.size());
    EXPECT_TRUE(received.message == expected);
  }
  sender.join();

  // cat saw its stdin close and exited: a clean end, not mid-message.
  Received end = ReceiveMessage(from_cat.ends.read_fd, 10.0);
  EXPECT_FALSE(end.ok);
  EXPECT_EQ(end.error, ReceiveError::kClosed);
  EXPECT_EQ(end.detail, "the writer closed the pipe");
  EXPECT_TRUE(cat->Wait(10.0)->success());
}

TEST(ChannelTest, SeparatesMessagesThatArriveTogether) {
  TestPipe pipe;
  ASSERT_TRUE(SendMessage(pipe.ends.write_fd, "a").ok());
  ASSERT_TRUE(SendMessage(pipe.ends.write_fd, "bc").ok());
  EXPECT_EQ(ReceiveMessage(pipe.ends.read_fd, 1.0).message, "a");
  EXPECT_EQ(ReceiveMessage(pipe.ends.read_fd, 1.0).message, "bc");
}

TEST(ChannelTest, TimesOutWhenNothingArrives) {
  TestPipe pipe;
  const Clock::time_point start = Clock::now();
  Received received = ReceiveMessage(pipe.ends.read_fd, 0.2);
  const double elapsed = SecondsSince(start);
  EXPECT_FALSE(received.ok);
  EXPECT_EQ(received.error, ReceiveError::kTimeout);
  EXPECT_EQ(received.detail, "no message within 0.2 s");
  EXPECT_GE(elapsed, 0.2);
  EXPECT_LT(elapsed, 1.2);

  const Clock::time_point now = Clock::now();
  EXPECT_EQ(ReceiveMessage(pipe.ends.read_fd, 0.0).error, ReceiveError::kTimeout);
  EXPECT_LT(SecondsSince(now), 0.5);
}

TEST(ChannelTest, TimesOutInTheMiddleOfAMessage) {
  TestPipe pipe;
  pipe.Write(std::string("\x0a\0\0\0abc", 7));
  const Clock::time_point start = Clock::now();
  Received received = ReceiveMessage(pipe.ends.read_fd, 0.2);
  EXPECT_EQ(received.error, ReceiveError::kTimeout);
  EXPECT_TRUE(Contains(received.detail, "mid-message (3 of 10 bytes)")) << received.detail;
  EXPECT_GE(SecondsSince(start), 0.2);
  EXPECT_LT(SecondsSince(start), 1.2);
}

TEST(ChannelTest, WriterClosingIsClosedSayingWhetherMidMessage) {
  const std::pair<std::string, std::string> cases[] = {
      {"", "the writer closed the pipe"},
      {"\x01\x02", "the writer closed the pipe mid-message (2 of 4 length bytes)"},
  };
  for (const auto& [written, detail] : cases) {
    TestPipe pipe;
    pipe.Write(written);
    CloseFd(&pipe.ends.write_fd);
    Received received = ReceiveMessage(pipe.ends.read_fd, 5.0);
    EXPECT_EQ(received.error, ReceiveError::kClosed);
    EXPECT_EQ(received.detail, detail);
  }
}

TEST(ChannelTest, WriterDyingMidMessageIsClosedMidMessage) {
  // A child that announces 10 bytes, writes 3 and exits.
  TestPipe pipe;
  SpawnOptions options;
  options.argv = {"/bin/sh", "-c", R"(printf '\012\000\000\000abc')"};
  options.fds = {{pipe.ends.write_fd, 1}};
  Result<Subprocess> writer = Subprocess::Spawn(options);
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  CloseFd(&pipe.ends.write_fd);
  Received received = ReceiveMessage(pipe.ends.read_fd, 10.0);
  EXPECT_EQ(received.error, ReceiveError::kClosed);
  EXPECT_EQ(received.detail, "the writer closed the pipe mid-message (3 of 10 bytes)");
  EXPECT_TRUE(writer->Wait(10.0)->success());
}

TEST(ChannelTest, RejectsLengthsOverTheLimit) {
  TestPipe pipe;
  pipe.Write("\xff\xff\xff\xff");
  Received received = ReceiveMessage(pipe.ends.read_fd, 5.0);
  EXPECT_EQ(received.error, ReceiveError::kIoError);
  EXPECT_TRUE(Contains(received.detail, "4294967295 bytes is over the 1073741824-byte limit"))
      << received.detail;

  // Address space only: SendMessage refuses before it reads a byte.
  const std::size_t size = kMaxMessageBytes + 1;
  void* reserved =
      mmap(nullptr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  ASSERT_NE(reserved, MAP_FAILED);
  const Status sent =
      SendMessage(pipe.ends.write_fd, std::string_view(static_cast<char*>(reserved), size));
  munmap(reserved, size);
  EXPECT_EQ(sent.code(), Status::Code::kInvalidInput);
}

TEST(ChannelTest, SendingToAReaderThatHasGoneIsAnErrorNotSigpipe) {
  // SIGPIPE's default action would end this test program.
  struct sigaction current {};
  sigaction(SIGPIPE, nullptr, &current);
  ASSERT_EQ(current.sa_handler, SIG_DFL);

  TestPipe pipe;
  SpawnOptions options;
  options.argv = {"/bin/true"};
  options.fds = {{pipe.ends.read_fd, 0}};
  Result<Subprocess> reader = Subprocess::Spawn(options);
  ASSERT_TRUE(reader.ok());
  CloseFd(&pipe.ends.read_fd);
  ASSERT_TRUE(reader->Wait(10.0)->success());

  const Status sent = SendMessage(pipe.ends.write_fd, "nobody listens");
  EXPECT_EQ(sent.code(), Status::Code::kIoError);
  EXPECT_EQ(sent.message(), "the reader closed the pipe after 0 of 18 bytes");

  // Nothing left behind: no SIGPIPE pending, and SIGPIPE not blocked.
  sigset_t pending;
  sigpending(&pending);
  EXPECT_FALSE(sigismember(&pending, SIGPIPE));
  sigset_t mask;
  pthread_sigmask(SIG_BLOCK, nullptr, &mask);
  EXPECT_FALSE(sigismember(&mask, SIGPIPE));
}

TEST(ChannelTest, SendTimesOutWhenNobodyReads) {
  TestPipe pipe;
  const std::string message(std::size_t{1} << 20, 'x');
  const Clock::time_point start = Clock::now();
  const Status sent = SendMessage(pipe.ends.write_fd, message, 0.2);
  EXPECT_EQ(sent.code(), Status::Code::kIoError);
  EXPECT_TRUE(Contains(sent.message(), "timed out after 0.2 s")) << sent.message();
  EXPECT_GE(SecondsSince(start), 0.2);
  EXPECT_LT(SecondsSince(start), 1.2);
}

}  // namespace
}  // namespace opverify
