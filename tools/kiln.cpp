// The kiln command line. Subcommands grow with the compiler: `graph`, `run`
// and `opt` arrive with the IR and the frontend.
#include <cstring>
#include <iostream>
#include <string>

#include "kiln/core/operator.h"

namespace {

int usage(std::ostream& out, int code) {
  out << "usage: kiln <command> [args]\n"
         "commands:\n"
         "  ops [PREFIX]   list the registered operator schemas (optionally those starting with PREFIX)\n"
         "  --help         this text\n";
  return code;
}

int listOps(const char* prefix) {
  for (const auto& op : kiln::getAllOperators()) {
    std::string s = op->schema().str();
    if (!prefix || s.rfind(prefix, 0) == 0) std::cout << s << "\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage(std::cerr, 2);
  std::string command = argv[1];
  try {
    if (command == "--help" || command == "-h" || command == "help") return usage(std::cout, 0);
    if (command == "ops") return listOps(argc > 2 ? argv[2] : nullptr);
    std::cerr << "kiln: unknown command '" << command << "'\n";
    return usage(std::cerr, 2);
  } catch (const std::exception& e) {
    std::cerr << "kiln: error: " << e.what() << "\n";
    return 1;
  }
}
