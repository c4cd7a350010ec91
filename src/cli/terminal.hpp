#pragma once
// What a terminal gets and a pipe does not: colour (never with NO_COLOR or
// TERM=dumb) and a live status line under the streamed output.

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <ostream>
#include <string>
#include <thread>

#include "base/process.hpp"

namespace stackup::cli {

enum class Color { red, green, yellow, cyan, dim, bold };

// Colour for the stream on `fd`: a TTY, NO_COLOR unset or empty, TERM not "dumb".
bool wants_color(int fd, const base::Environment& env);
// Whether `fd` is a terminal a live status line may redraw.
bool is_terminal(int fd, const base::Environment& env);

struct Paint {
    bool enabled = false;
    std::string operator()(const std::string& text, Color color) const;
};

// "[2/4] sglang  12.3s ⠙" redrawn in place on a terminal while a step runs, every
// other line printed above it. Not live (a pipe, a file): nothing is drawn at all,
// lines are printed as they come. Thread-safe: a ticker thread redraws the clock.
class StatusLine {
public:
    StatusLine(std::ostream& out, bool live);
    ~StatusLine();
    StatusLine(const StatusLine&) = delete;
    StatusLine& operator=(const StatusLine&) = delete;

    void start(const std::string& label);
    void print(const std::string& line);   // above the status line
    void stop();                           // erases it

private:
    void draw_locked();
    void erase_locked();
    void tick();

    std::ostream& out_;
    bool live_;
    std::mutex mutex_;
    std::condition_variable wake_;
    std::string label_;
    bool shown_ = false;
    bool quit_ = false;
    std::size_t frame_ = 0;
    std::chrono::steady_clock::time_point started_;
    std::thread ticker_;   // last: started after everything it reads exists
};

}  // namespace stackup::cli
