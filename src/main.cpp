#include "cli/cli.hpp"

int main(int argc, char** argv) { return stackup::cli::run(argc, argv); }
