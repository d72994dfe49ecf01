// The kiln command line. Subcommands grow with the compiler: `run` and `opt`
// arrive with the frontend.
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "kiln/core/operator.h"
#include "kiln/ir/ir_parser.h"

namespace {

int usage(std::ostream& out, int code) {
  out << "usage: kiln <command> [args]\n"
         "commands:\n"
         "  ops [PREFIX]   list the registered operator schemas (optionally those starting with PREFIX)\n"
         "  graph FILE.ir  parse IR text (`-` reads stdin), check it, and print it back canonically\n"
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

int printGraph(const char* path) {
  std::ostringstream text;
  if (std::strcmp(path, "-") == 0) {
    text << std::cin.rdbuf();
  } else {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      std::cerr << "kiln: cannot read " << path << "\n";
      return 1;
    }
    text << in.rdbuf();
  }
  auto graph = kiln::parseIR(text.str());
  graph->lint();
  std::cout << *graph;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage(std::cerr, 2);
  std::string command = argv[1];
  try {
    if (command == "--help" || command == "-h" || command == "help") return usage(std::cout, 0);
    if (command == "ops") return listOps(argc > 2 ? argv[2] : nullptr);
    if (command == "graph") {
      if (argc != 3) return usage(std::cerr, 2);
      return printGraph(argv[2]);
    }
    std::cerr << "kiln: unknown command '" << command << "'\n";
    return usage(std::cerr, 2);
  } catch (const std::exception& e) {
    std::cerr << "kiln: error: " << e.what() << "\n";
    return 1;
  }
}
