// JIT logging: KILN_JIT_LOG_LEVEL's file selection and levels, the line prefixes.
#include <gtest/gtest.h>

#include <sstream>

#include "kiln/ir/graph.h"
#include "kiln/ir/ir_parser.h"
#include "kiln/passes/constant_propagation.h"
#include "kiln/passes/dead_code_elimination.h"
#include "kiln/util/jit_log.h"

namespace kiln {
namespace {

// Runs dce and constant propagation with `spec` as the log levels, returning the log.
std::string logOf(const std::string& spec) {
  std::ostringstream out;
  setJitLogStream(&out);
  setJitLogLevels(spec);
  auto graph = parseIR(R"(
graph(%x : int):
  %two : int = prim::Constant[value=2]()
  %three : int = prim::Constant[value=3]()
  %five : int = aten::add(%two, %three)
  %dead : int = aten::mul(%x, %five)
  %zero : int = prim::Constant[value=0]()
  %raises : int = aten::floordiv(%two, %zero)
  %r : int = aten::add(%x, %five)
  return (%r)
)");
  constantPropagation(graph);
  eliminateDeadCode(graph);
  setJitLogLevels("");
  setJitLogStream(nullptr);
  return out.str();
}

TEST(JitLog, OffUnlessAFileIsNamed) { EXPECT_EQ(logOf(""), ""); }

TEST(JitLog, NamedFileLogsDumpsAndUpdates) {
  std::string log = logOf("dead_code_elimination");
  EXPECT_NE(log.find("[UPDATE dead_code_elimination.cpp:"), std::string::npos) << log;
  EXPECT_NE(log.find("removing dead node"), std::string::npos) << log;
  EXPECT_NE(log.find("[DUMP dead_code_elimination.cpp:"), std::string::npos) << log;
  // Every line of a dumped graph carries the prefix.
  EXPECT_NE(log.find("] graph(%x : int):"), std::string::npos) << log;
  EXPECT_EQ(log.find("constant_propagation.cpp"), std::string::npos) << log;
  EXPECT_EQ(log.find("[DEBUG"), std::string::npos) << log;
}

TEST(JitLog, ArrowAddsDebugAndColonsSeparateFiles) {
  std::string log = logOf(">constant_propagation.cpp:dead_code_elimination");
  EXPECT_NE(log.find("[UPDATE constant_propagation.cpp:"), std::string::npos) << log;
  EXPECT_NE(log.find("folding "), std::string::npos) << log;
  // Division by zero raises when folded, so it stays: a debug line says why.
  EXPECT_NE(log.find("[DEBUG constant_propagation.cpp:"), std::string::npos) << log;
  EXPECT_NE(log.find("[UPDATE dead_code_elimination.cpp:"), std::string::npos) << log;
  EXPECT_EQ(log.find("[DEBUG dead_code_elimination.cpp:"), std::string::npos) << log;
}

TEST(JitLog, IsEnabledChecksLevels) {
  setJitLogLevels(">>alias_analysis:cleanup");
  EXPECT_TRUE(isJitLogEnabled("kiln/passes/analysis/alias_analysis.cpp", JitLoggingLevel::GRAPH_DEBUG));
  EXPECT_TRUE(isJitLogEnabled("cleanup.cpp", JitLoggingLevel::GRAPH_DUMP));
  EXPECT_FALSE(isJitLogEnabled("cleanup.cpp", JitLoggingLevel::GRAPH_DEBUG));
  EXPECT_FALSE(isJitLogEnabled("kiln/passes/lower_tuples.cpp", JitLoggingLevel::GRAPH_DUMP));
  setJitLogLevels("");
  EXPECT_FALSE(isJitLogEnabled("cleanup.cpp", JitLoggingLevel::GRAPH_DUMP));
}

}  // namespace
}  // namespace kiln
