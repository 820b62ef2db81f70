// ONNX import of small models that tests/dse/make_tiny_onnx.py writes at test
// time with python3-onnx's helper API (/usr/bin/python3).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "dse/error.hpp"
#include "dse/io/onnx_import.hpp"
#include "tests/scratch.hpp"

namespace wl = dse::costmodel::workload;

namespace {

class OnnxImport : public ::testing::Test {
 protected:
  // A folder of this process's own (tests/scratch.hpp): ctest runs each test of the suite as a
  // process of its own, in parallel, and each writes the models; in one shared folder a test could
  // read a model that another was rewriting (OnnxImport.BatchAndSequenceAreSymbolic failed so
  // under ctest -j2).
  static void SetUpTestSuite() {
    dir_ = dse::test::scratch_dir("tiny_onnx").string();
    const std::string cmd = "/usr/bin/python3 " + std::string(DSE_SOURCE_DIR) + "/tests/dse/make_tiny_onnx.py " + dir_;
    status_ = std::system(cmd.c_str());
  }
  void SetUp() override {
    if (!dse::io::onnx_support_built()) GTEST_SKIP() << "built with DSE_WITH_ONNX=OFF";
    ASSERT_EQ(status_, 0) << "make_tiny_onnx.py failed (needs python3-onnx)";
  }
  static std::string model(const char* name) { return dir_ + "/" + name; }
  static dse::io::OnnxImportOptions options(std::int64_t batch, std::int64_t seq) {
    dse::io::OnnxImportOptions o;
    o.batch = batch;
    o.seq = seq;
    return o;
  }
  static inline std::string dir_;
  static inline int status_ = -1;
};

const wl::Operator& op(const wl::OperatorGraph& g, const char* name) {
  const auto f = wl::find_op(g, name);
  if (f.op == nullptr) throw std::runtime_error(std::string("no operator ") + name);
  return *f.op;
}

}  // namespace

TEST_F(OnnxImport, OperatorsAndShapesAtBatch2Seq5) {
  const auto imp = dse::io::import_onnx(model("tiny.onnx"), options(2, 5));
  const auto& g = imp.graph;
  EXPECT_TRUE(imp.warnings.empty());
  EXPECT_EQ(wl::validate(g), "");
  ASSERT_EQ(g.blocks.size(), 1u);
  EXPECT_EQ(g.blocks[0].nodes.size(), 13u);

  const auto& ln = op(g, "ln");
  EXPECT_EQ(ln.kind, wl::OpKind::layernorm);
  EXPECT_EQ(ln.rows, 10);
  EXPECT_EQ(ln.cols, 64);
  const auto& q = op(g, "q_proj");  // [2,5,64] x W[64,64]: a GEMM of 10 rows
  EXPECT_EQ(q.kind, wl::OpKind::gemm);
  EXPECT_EQ(q.m, 10);
  EXPECT_EQ(q.n, 64);
  EXPECT_EQ(q.k, 64);
  // fp32 bytes: ln output 640 + W 4096 + q 640 elements, 4 bytes each.
  EXPECT_DOUBLE_EQ(wl::bytes(q), 4.0 * (640 + 4096 + 640));
  const auto& s = op(g, "scores");  // [2,5,64] x [2,64,5]: two activations
  EXPECT_EQ(s.kind, wl::OpKind::batched_gemm);
  EXPECT_EQ(s.batch, 2);
  EXPECT_EQ(s.m, 5);
  EXPECT_EQ(s.n, 5);
  EXPECT_EQ(s.k, 64);
  const auto& sm = op(g, "softmax");
  EXPECT_EQ(sm.rows, 10);
  EXPECT_EQ(sm.cols, 5);
  EXPECT_EQ(op(g, "relu").kind, wl::OpKind::elementwise);
  EXPECT_EQ(op(g, "relu").cols, 640);
  const auto& mean = op(g, "mean");
  EXPECT_EQ(mean.kind, wl::OpKind::reduction);
  EXPECT_EQ(mean.rows, 10);
  EXPECT_EQ(mean.cols, 64);
  const auto& conv = op(g, "conv");
  EXPECT_EQ(conv.kind, wl::OpKind::conv2d);
  EXPECT_EQ(conv.conv.out_h(), 8);
  EXPECT_EQ(op(g, "gap").rows, 8);  // 2 images x 4 channels

  // MACs by hand: q, v, out projections 3 x 10*64*64; scores and context 2 x 2*5*5*64;
  // Gemm 2*16*32; conv 2 images * 8*8 outputs * 4 channels * 3*3*3 = 13,824.
  EXPECT_DOUBLE_EQ(wl::totals(g).macs, 3.0 * 10 * 64 * 64 + 2.0 * 2 * 5 * 5 * 64 + 2.0 * 16 * 32 + 13824.0);
  // Edges follow the tensors.
  const auto& nodes = g.blocks[0].nodes;
  for (const auto& n : nodes) {
    if (n.op.name == "context") {
      EXPECT_EQ(n.inputs, (std::vector<std::string>{"softmax", "v_proj"}));
    }
    if (n.op.name == "scores") {
      EXPECT_EQ(n.inputs, (std::vector<std::string>{"q_proj"}));
    }
  }
}

TEST_F(OnnxImport, BatchAndSequenceAreSymbolic) {
  const auto imp = dse::io::import_onnx(model("tiny.onnx"), options(4, 7));
  EXPECT_EQ(op(imp.graph, "q_proj").m, 28);
  EXPECT_EQ(op(imp.graph, "scores").n, 7);
  auto o = options(4, 7);
  o.dims["seq"] = 3;  // an explicit binding wins
  EXPECT_EQ(op(dse::io::import_onnx(model("tiny.onnx"), o).graph, "q_proj").m, 12);
  o.precision = wl::Precision::bf16;
  const auto bf = dse::io::import_onnx(model("tiny.onnx"), o);
  EXPECT_DOUBLE_EQ(wl::bytes(op(bf.graph, "q_proj")), 2.0 * (12 * 64 + 4096 + 12 * 64));
}

TEST_F(OnnxImport, UnsupportedNodeIsAnErrorNamingIt) {
  try {
    (void)dse::io::import_onnx(model("tiny_unsupported.onnx"), options(2, 5));
    FAIL() << "expected an error";
  } catch (const dse::InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("node 'k_transpose' (op Transpose)"), std::string::npos) << what;
  }
}

TEST_F(OnnxImport, UnsupportedNodeAsElementwiseWithWarning) {
  auto o = options(2, 5);
  o.unknown_as_elementwise = true;
  const auto imp = dse::io::import_onnx(model("tiny_unsupported.onnx"), o);
  ASSERT_EQ(imp.warnings.size(), 1u);
  EXPECT_NE(imp.warnings[0].find("k_transpose"), std::string::npos);
  const auto& t = op(imp.graph, "k_transpose");
  EXPECT_EQ(t.kind, wl::OpKind::elementwise);
  EXPECT_EQ(t.cols, 2 * 16 * 5);
  const auto& s = op(imp.graph, "scores");
  EXPECT_EQ(s.kind, wl::OpKind::batched_gemm);
  EXPECT_EQ(s.k, 16);
}

TEST_F(OnnxImport, MissingFileIsAnInputError) {
  EXPECT_THROW((void)dse::io::import_onnx(dir_ + "/absent.onnx", options(1, 1)), dse::InputError);
}
