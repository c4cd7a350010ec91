#include "cli/terminal.hpp"

#include <unistd.h>

#include <array>

#include <fmt/format.h>

namespace stackup::cli {
namespace {

std::string value_of(const base::Environment& env, const char* key) {
    auto it = env.find(key);
    return it == env.end() ? "" : it->second;
}

const char* code_of(Color color) {
    switch (color) {
        case Color::red: return "\x1b[31m";
        case Color::green: return "\x1b[32m";
        case Color::yellow: return "\x1b[33m";
        case Color::cyan: return "\x1b[36m";
        case Color::dim: return "\x1b[2m";
        case Color::bold: return "\x1b[1m";
    }
    return "";
}

constexpr std::array<const char*, 10> kSpinner{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"};

}  // namespace

bool is_terminal(int fd, const base::Environment& env) {
    return ::isatty(fd) == 1 && value_of(env, "TERM") != "dumb";
}

bool wants_color(int fd, const base::Environment& env) {
    return is_terminal(fd, env) && value_of(env, "NO_COLOR").empty();
}

std::string Paint::operator()(const std::string& text, Color color) const {
    return enabled ? code_of(color) + text + "\x1b[0m" : text;
}

StatusLine::StatusLine(std::ostream& out, bool live) : out_(out), live_(live) {
    if (live_) {
        ticker_ = std::thread([this] { tick(); });
    }
}

StatusLine::~StatusLine() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        quit_ = true;
        erase_locked();
    }
    wake_.notify_all();
    if (ticker_.joinable()) {
        ticker_.join();
    }
}

void StatusLine::start(const std::string& label) {
    std::lock_guard<std::mutex> lock(mutex_);
    label_ = label;
    started_ = std::chrono::steady_clock::now();
    draw_locked();
}

void StatusLine::print(const std::string& line) {
    std::lock_guard<std::mutex> lock(mutex_);
    bool was_shown = shown_;
    erase_locked();
    out_ << line << "\n";
    if (was_shown) {
        draw_locked();
    }
    out_ << std::flush;
}

void StatusLine::stop() {
    std::lock_guard<std::mutex> lock(mutex_);
    erase_locked();
    label_.clear();
    out_ << std::flush;
}

void StatusLine::draw_locked() {
    if (!live_ || label_.empty()) {
        return;
    }
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    out_ << "\r\x1b[2K" << label_ << "  " << fmt::format("{:.1f}s", seconds) << " " << kSpinner[frame_ % kSpinner.size()] << std::flush;
    shown_ = true;
}

void StatusLine::erase_locked() {
    if (shown_) {
        out_ << "\r\x1b[2K";
        shown_ = false;
    }
}

void StatusLine::tick() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!quit_) {
        wake_.wait_for(lock, std::chrono::milliseconds(120));
        if (!quit_ && !label_.empty()) {
            ++frame_;
            draw_locked();
        }
    }
}

}  // namespace stackup::cli
