#include "runner/common/terminal_log.h"

#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>

#include <cstdio>
#include <mutex>
#include <string_view>
#include <utility>

#include "runner/common/terminal_text.h"

namespace opverify {
namespace {

// stderr's live line, and the lock that keeps it and log messages apart.
std::mutex g_live_mutex;
std::string g_live_line;  // "" when none

class SafeSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  SafeSink(spdlog::sink_ptr inner, bool console) : inner_(std::move(inner)), console_(console) {
    inner_->set_level(spdlog::level::trace);  // this sink's own level filters
  }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    const std::string clean =
        TerminalSafe(std::string_view(msg.payload.data(), msg.payload.size()));
    spdlog::details::log_msg copy = msg;
    copy.payload = spdlog::string_view_t(clean.data(), clean.size());
    if (!console_) {
      inner_->log(copy);
      return;
    }
    std::lock_guard<std::mutex> live(g_live_mutex);
    if (!g_live_line.empty()) std::fputs("\r\033[K", stderr);
    inner_->log(copy);
    inner_->flush();
    if (!g_live_line.empty()) std::fprintf(stderr, "\r\033[K%s", g_live_line.c_str());
    std::fflush(stderr);
  }
  void flush_() override { inner_->flush(); }
  void set_pattern_(const std::string& pattern) override { inner_->set_pattern(pattern); }
  void set_formatter_(std::unique_ptr<spdlog::formatter> formatter) override {
    inner_->set_formatter(std::move(formatter));
  }

 private:
  spdlog::sink_ptr inner_;
  bool console_;
};

}  // namespace

spdlog::sink_ptr TerminalSafeSink(spdlog::sink_ptr inner, bool console) {
  return std::make_shared<SafeSink>(std::move(inner), console);
}

void ShowLiveLine(const std::string& line) {
  std::lock_guard<std::mutex> live(g_live_mutex);
  g_live_line = line;
  std::fprintf(stderr, "\r\033[K%s", line.c_str());
  std::fflush(stderr);
}

void ClearLiveLine() {
  std::lock_guard<std::mutex> live(g_live_mutex);
  g_live_line.clear();
}

void PrintAboveLiveLine(const std::string& text) {
  std::lock_guard<std::mutex> live(g_live_mutex);
  std::fprintf(stderr, g_live_line.empty() ? "%s\n" : "\r\033[K%s\n", text.c_str());
  if (!g_live_line.empty()) std::fprintf(stderr, "\r\033[K%s", g_live_line.c_str());
  std::fflush(stderr);
}

std::shared_ptr<spdlog::logger> ConsoleLogger(const std::string& name) {
  return std::make_shared<spdlog::logger>(
      name, TerminalSafeSink(std::make_shared<spdlog::sinks::stderr_color_sink_mt>(), true));
}

}  // namespace opverify
