// Static memory plans (kiln/runtime/memory_plan.h): arena offsets, and
// executions that after warm-up allocate only their outputs, stay correct
// when a run leaves its plan, and keep escaping blocks intact.
#include <gtest/gtest.h>

#include <random>
#include <thread>
#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/ir/ir_parser.h"
#include "kiln/runtime/graph_executor.h"
#include "kiln/runtime/memory_plan.h"
#include "kiln/tensor/allocation_hook.h"
#include "kiln/tensor/factory.h"

using namespace kiln;

namespace {

bool conflict(const PlannedBlock& a, const PlannedBlock& b) { return a.begin <= b.end && b.begin <= a.end; }

size_t bytesOf(const PlannedBlock& b) { return (std::max<size_t>(b.nbytes, 1) + 63) / 64 * 64; }

// Every pair of blocks alive together is disjoint in the arena, and inside it.
void expectValid(const std::vector<PlannedBlock>& blocks, const ArenaLayout& layout) {
  ASSERT_EQ(layout.offsets.size(), blocks.size());
  for (size_t i = 0; i < blocks.size(); ++i) {
    EXPECT_EQ(layout.offsets[i] % 64, 0u);
    EXPECT_LE(layout.offsets[i] + bytesOf(blocks[i]), layout.total);
    for (size_t j = i + 1; j < blocks.size(); ++j) {
      if (!conflict(blocks[i], blocks[j])) continue;
      bool apart = layout.offsets[i] + bytesOf(blocks[i]) <= layout.offsets[j] ||
                   layout.offsets[j] + bytesOf(blocks[j]) <= layout.offsets[i];
      EXPECT_TRUE(apart) << "blocks " << i << " and " << j << " live together and overlap";
    }
  }
}

uint64_t allocationsDuring(const std::function<void()>& body) {
  uint64_t before = storageAllocationCounts().count;
  body();
  return storageAllocationCounts().count - before;
}

}  // namespace

TEST(MemoryPlan, DisjointLifetimesShareTheirBytes) {
  // a chain: each block dies right after the next is made, as x -> relu -> add
  std::vector<PlannedBlock> blocks{{1000, 0, 2}, {1000, 1, 4}, {1000, 3, 6}, {1000, 5, 7}};
  ArenaLayout layout = assignArenaOffsets(blocks);
  expectValid(blocks, layout);
  EXPECT_EQ(layout.total, 2 * 1024u);  // two buffers take turns
  EXPECT_EQ(layout.offsets[0], layout.offsets[2]);
  EXPECT_EQ(layout.offsets[1], layout.offsets[3]);
}

TEST(MemoryPlan, OverlappingLifetimesGetTheirOwnBytes) {
  std::vector<PlannedBlock> blocks{{64, 0, 10}, {128, 1, 2}, {0, 3, 4}, {200, 5, 9}};
  ArenaLayout layout = assignArenaOffsets(blocks);
  expectValid(blocks, layout);
  EXPECT_EQ(layout.total, 256u + 64u);  // the long-lived block plus the largest of the short ones
}

TEST(MemoryPlan, SmallBlocksFillGapsBetweenLargeOnes) {
  // two large blocks alive at different times; a small one alive with both
  std::vector<PlannedBlock> blocks{{4096, 0, 3}, {4096, 4, 8}, {64, 2, 6}};
  ArenaLayout layout = assignArenaOffsets(blocks);
  expectValid(blocks, layout);
  EXPECT_EQ(layout.total, 4096u + 64u);
}

TEST(MemoryPlan, RandomLifetimesNeverOverlap) {
  std::mt19937 gen(7);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<PlannedBlock> blocks;
    size_t sum = 0;
    for (int i = 0; i < 150; ++i) {
      uint64_t begin = gen() % 400;
      blocks.push_back({gen() % 5000, begin, begin + 1 + gen() % 40});
      sum += bytesOf(blocks.back());
    }
    ArenaLayout layout = assignArenaOffsets(blocks);
    expectValid(blocks, layout);
    EXPECT_LT(layout.total, sum);
  }
}

namespace {

// x -> four intermediates -> one output: a steady-state run allocates the output only.
std::shared_ptr<Graph> chainGraph() {
  return parseIR(R"IR(
graph(%x : Tensor, %w : Tensor):
  %one : int = prim::Constant[value=1]()
  %a : Tensor = aten::mm(%x, %w)
  %b : Tensor = aten::relu(%a)
  %c : Tensor = aten::add(%b, %a, %one)
  %d : Tensor = aten::mm(%c, %w)
  %e : Tensor = aten::sigmoid(%d)
  %f : Tensor = aten::add(%e, %c, %one)
  return (%f))IR");
}

struct OptimizeOff {
  // Fusion would turn the pointwise ops into one kernel; these tests want many intermediates.
  OptimizeOff() : was(graphExecutorOptimize()) { setGraphExecutorOptimize(false); }
  ~OptimizeOff() { setGraphExecutorOptimize(was); }
  bool was;
};

Tensor runChain(GraphExecutor& exec, const Tensor& x, const Tensor& w) {
  Stack s{IValue(x), IValue(w)};
  exec.run(s);
  return s[0].toTensor();
}

bool sameBits(const Tensor& a, const Tensor& b) {
  if (a.sizes() != b.sizes()) return false;
  return std::memcmp(a.rawData(), b.rawData(), static_cast<size_t>(a.numel()) * 4) == 0;
}

Tensor filled(IntArrayRef sizes, float seed) {
  Tensor t = zeros(sizes);
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = static_cast<float>((i * 37 % 101) - 50) * 0.01f * seed;
  return t;
}

}  // namespace

TEST(MemoryPlan, SteadyStateRunsAllocateOnlyTheirOutputs) {
  OptimizeOff off;
  ASSERT_TRUE(memoryPlanning());
  GraphExecutor exec(chainGraph(), "chain");
  Tensor x = filled({64, 128}, 1.0f), w = filled({128, 128}, 0.5f);
  Tensor expected;
  setMemoryPlanning(false);
  runChain(exec, x, w);                                                        // compiles the plan
  EXPECT_GE(allocationsDuring([&] { expected = runChain(exec, x, w); }), 6u);  // at least one per op
  setMemoryPlanning(true);
  for (int i = 0; i < 2; ++i) runChain(exec, x, w);  // warm-up, then the recorded run
  Stack probe{IValue(x), IValue(w)};
  const ExecutionPlan& plan = exec.getPlanFor(probe);
  ASSERT_TRUE(plan.memory);
  EXPECT_GT(plan.memory->arenaBytes(), 0u);
  EXPECT_LT(plan.memory->arenaBytes(), 5u * 64 * 128 * 4);  // intermediates share buffers
  for (int i = 0; i < 3; ++i) {
    Tensor out;
    EXPECT_EQ(allocationsDuring([&] { out = runChain(exec, x, w); }), 1u);
    EXPECT_TRUE(sameBits(out, expected));
  }
}

TEST(MemoryPlan, RankOnlyPlansHaveNoMemoryPlan) {
  OptimizeOff off;
  setShapeSpecializationLimit(0);
  GraphExecutor exec(chainGraph(), "chain");
  Stack s{IValue(ones({2, 2})), IValue(ones({2, 2}))};
  EXPECT_FALSE(exec.getPlanFor(s).memory);
  setShapeSpecializationLimit(4);
}

TEST(MemoryPlan, RunsThatLeaveThePlanStayCorrect) {
  // The body's sizes depend on a counter: every run differs from the recording.
  MemoryPlanner planner;
  MemoryPlanStats before = memoryPlanStats();
  for (int run = 0; run < 12; ++run) {
    Tensor keep;
    planner.run([&] {
      int64_t n = 1000 + (run % 3) * 500;
      Tensor a = full({n}, Scalar(1.0 * run), ScalarType::Float);
      Tensor b = full({n}, Scalar(2.0), ScalarType::Float);
      Tensor c = zeros({n});
      for (int64_t i = 0; i < n; ++i) c.data<float>()[i] = a.data<float>()[i] + b.data<float>()[i];
      keep = c;
    });
    for (int64_t i = 0; i < keep.numel(); ++i) ASSERT_EQ(keep.data<float>()[i], 1.0f * run + 2.0f);
  }
  MemoryPlanStats after = memoryPlanStats();
  EXPECT_GT(after.deviations, before.deviations);
  EXPECT_GT(after.given_up, before.given_up);
}

TEST(MemoryPlan, BlocksThatEscapeKeepTheirBytes) {
  MemoryPlanner planner;
  std::vector<Tensor> kept;
  // An intermediate in the recording that a later run keeps: its arena must not be reused under it.
  for (int run = 0; run < 6; ++run) {
    planner.run([&] {
      Tensor a = full({4096}, Scalar(static_cast<double>(run)), ScalarType::Float);
      Tensor b = full({4096}, Scalar(-1.0), ScalarType::Float);
      if (run >= 3) kept.push_back(a);
    });
  }
  ASSERT_EQ(kept.size(), 3u);
  for (size_t k = 0; k < kept.size(); ++k) {
    for (int64_t i = 0; i < 4096; ++i) ASSERT_EQ(kept[k].data<float>()[i], static_cast<float>(k + 3));
  }
}

TEST(MemoryPlan, ThreadsRunningOnePlanUseTheirOwnArenas) {
  OptimizeOff off;
  GraphExecutor exec(chainGraph(), "chain");
  Tensor w = filled({32, 32}, 0.25f);
  std::vector<Tensor> inputs, expected;
  setMemoryPlanning(false);
  for (int t = 0; t < 4; ++t) {
    inputs.push_back(filled({16, 32}, 1.0f + static_cast<float>(t)));
    expected.push_back(runChain(exec, inputs.back(), w));
  }
  setMemoryPlanning(true);
  std::vector<std::thread> threads;
  std::vector<int> wrong(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        if (!sameBits(runChain(exec, inputs[t], w), expected[t])) ++wrong[t];
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(wrong[t], 0) << "thread " << t;
}

TEST(MemoryPlan, NestedPlainRunsHideTheirAllocations) {
  MemoryPlanner outer, inner;
  for (int run = 0; run < 5; ++run) {
    outer.run([&] {
      Tensor a = full({300}, Scalar(1.0), ScalarType::Float);
      inner.run([&] { Tensor b = full({300}, Scalar(2.0), ScalarType::Float); });
      Tensor c = full({300}, Scalar(3.0), ScalarType::Float);
    });
  }
  MemoryPlanStats before = memoryPlanStats();
  outer.run([&] {
    Tensor a = full({300}, Scalar(1.0), ScalarType::Float);
    inner.run([&] { Tensor b = full({300}, Scalar(2.0), ScalarType::Float); });
    Tensor c = full({300}, Scalar(3.0), ScalarType::Float);
  });
  EXPECT_EQ(memoryPlanStats().deviations, before.deviations);
  EXPECT_GT(outer.arenaBytes(), 0u);
  EXPECT_GT(inner.arenaBytes(), 0u);
}
