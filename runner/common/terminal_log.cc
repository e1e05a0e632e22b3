#include "runner/common/terminal_log.h"

#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>

#include <mutex>
#include <string_view>
#include <utility>

#include "runner/common/terminal_text.h"

namespace opverify {
namespace {

class SafeSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit SafeSink(spdlog::sink_ptr inner) : inner_(std::move(inner)) {
    inner_->set_level(spdlog::level::trace);  // this sink's own level filters
  }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    const std::string clean =
        TerminalSafe(std::string_view(msg.payload.data(), msg.payload.size()));
    spdlog::details::log_msg copy = msg;
    copy.payload = spdlog::string_view_t(clean.data(), clean.size());
    inner_->log(copy);
  }
  void flush_() override { inner_->flush(); }
  void set_pattern_(const std::string& pattern) override { inner_->set_pattern(pattern); }
  void set_formatter_(std::unique_ptr<spdlog::formatter> formatter) override {
    inner_->set_formatter(std::move(formatter));
  }

 private:
  spdlog::sink_ptr inner_;
};

}  // namespace

spdlog::sink_ptr TerminalSafeSink(spdlog::sink_ptr inner) {
  return std::make_shared<SafeSink>(std::move(inner));
}

std::shared_ptr<spdlog::logger> ConsoleLogger(const std::string& name) {
  return std::make_shared<spdlog::logger>(
      name, TerminalSafeSink(std::make_shared<spdlog::sinks::stderr_color_sink_mt>()));
}

}  // namespace opverify
