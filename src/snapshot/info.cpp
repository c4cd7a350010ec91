#include "snapshot/info.hpp"

namespace stackup::snapshot {

std::string to_string(Strategy strategy) {
    switch (strategy) {
        case Strategy::copy:
            return "copy";
        case Strategy::hardlink:
            return "hardlink";
        case Strategy::reflink:
            return "reflink";
        case Strategy::automatic:
            return "automatic";
    }
    return "?";
}

std::optional<Strategy> strategy_from_string(const std::string& text) {
    for (Strategy s : {Strategy::copy, Strategy::hardlink, Strategy::reflink, Strategy::automatic}) {
        if (to_string(s) == text) {
            return s;
        }
    }
    return std::nullopt;
}

}  // namespace stackup::snapshot
