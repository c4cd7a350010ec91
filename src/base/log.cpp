#include "base/log.hpp"

#include <memory>
#include <mutex>

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

namespace stackup::base::log {
namespace {

spdlog::level::level_enum to_spdlog(Level level) {
    switch (level) {
        case Level::debug: return spdlog::level::debug;
        case Level::info: return spdlog::level::info;
        case Level::warn: return spdlog::level::warn;
        case Level::error: return spdlog::level::err;
        case Level::off: return spdlog::level::off;
    }
    return spdlog::level::info;
}

struct State {
    Level level = Level::warn;
    std::shared_ptr<spdlog::sinks::stderr_sink_mt> stderr_sink;
    std::shared_ptr<spdlog::logger> logger;
};

State& state() {
    static State s = [] {
        State init;
        init.stderr_sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
        init.stderr_sink->set_pattern("stackup: %l: %v");
        init.stderr_sink->set_level(to_spdlog(init.level));
        init.logger = std::make_shared<spdlog::logger>("stackup", init.stderr_sink);
        init.logger->set_level(spdlog::level::debug);
        init.logger->flush_on(spdlog::level::debug);
        return init;
    }();
    return s;
}

}  // namespace

void set_level(Level level) {
    state().level = level;
    state().stderr_sink->set_level(to_spdlog(level));
}

Level level() { return state().level; }

void add_file(const std::filesystem::path& path) {
    auto sink = std::make_shared<spdlog::sinks::basic_file_sink_mt>(path.string(), false);
    sink->set_pattern("%Y-%m-%dT%H:%M:%S.%e %l %v");
    sink->set_level(spdlog::level::debug);
    state().logger->sinks().push_back(sink);
}

void debug(std::string_view message) { state().logger->debug("{}", message); }
void info(std::string_view message) { state().logger->info("{}", message); }
void warn(std::string_view message) { state().logger->warn("{}", message); }
void error(std::string_view message) { state().logger->error("{}", message); }

}  // namespace stackup::base::log
