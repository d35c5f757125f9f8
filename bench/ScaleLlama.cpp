//===- bench/ScaleLlama.cpp - Generate a Llama-style external-data model --===//
//
// Writes a Llama-style decoder model of about a chosen size, with every weight
// in one external-data file, for bench/scale_llama.sh:
//
//   input_ids -> Gather(embed) -> N x [ RMSNorm -> q/k/v MatMul -> attention
//   (Softmax(q kT / sqrt(h)) v) -> o MatMul -> residual Add -> RMSNorm ->
//   gate/up MatMul -> SiLU(gate) * up -> down MatMul -> residual Add ]
//   -> RMSNorm -> lm_head MatMul -> logits
//
// RMSNorm is decomposed (Pow, ReduceMean, Add eps, Sqrt, Div, Mul weight), as
// exporters write it. Every layer's q/k/v/o and gate/up/down weights have the
// same dtype and shape as the other layers' (as in a real model: 30+ twins
// per shape) and different, pseudo-random contents, so a duplicate-constant
// pass that hashes whole tensors must read every byte. Weights are float32
// with small magnitudes, laid out as onnxslim's writer lays out external
// data (so the script can check that an unchanged model's data file comes
// back byte for byte); the data file is written in 1 MiB blocks, so the
// generator itself needs little memory.
//
// Usage: bench_scale_llama OUT.onnx SIZE_MB [HIDDEN]
//   writes OUT.onnx and OUT.onnx.data; HIDDEN (default 2048, or 256 for
//   sizes under 512 MB) sets the hidden size; the number of layers is chosen
//   so that the data file is about SIZE_MB megabytes (at least one layer).
//
//===----------------------------------------------------------------------===//
#include "schema/onnx.pb.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

namespace onnx = onnxslim::onnx;

namespace {

/// Appends pseudo-random float32 weights to the data file, tracking the offset.
class DataWriter {
public:
  explicit DataWriter(int fd) : fd_(fd), block_(size_t{1} << 18) {}

  /// Given a count of floats, Execute: pads to the alignment onnxslim's
  /// writer uses (4096 for 64 KiB and more, else 64) and writes them,
  /// Result: their offset.
  uint64_t write(uint64_t count) {
    uint64_t align = count * sizeof(float) >= 65536 ? 4096 : 64;
    uint64_t at = (offset_ + align - 1) / align * align;
    if (at > offset_) {
      std::vector<char> zeros(static_cast<size_t>(at - offset_));
      put(zeros.data(), zeros.size());
      offset_ = at;
    }
    while (count > 0) {
      size_t n = static_cast<size_t>(std::min<uint64_t>(count, block_.size()));
      for (size_t i = 0; i < n; ++i)
        block_[i] = next();
      put(reinterpret_cast<const char *>(block_.data()), n * sizeof(uint32_t));
      offset_ += n * sizeof(uint32_t);
      count -= n;
    }
    return at;
  }
  uint64_t size() const { return offset_; }

private:
  void put(const char *p, size_t bytes) {
    while (bytes > 0) {
      ssize_t w = ::write(fd_, p, bytes);
      if (w < 0) {
        std::perror("bench_scale_llama: write");
        std::exit(1);
      }
      p += w;
      bytes -= static_cast<size_t>(w);
    }
  }

  /// A float bit pattern: random sign and mantissa, exponent 2^-7..2^-4.
  uint32_t next() {
    state_ ^= state_ << 13;
    state_ ^= state_ >> 7;
    state_ ^= state_ << 17;
    auto r = static_cast<uint32_t>(state_ >> 11);
    uint32_t exponent = 120 + (r & 3);
    return (r & 0x80000000u) | (exponent << 23) | ((r >> 2) & 0x7FFFFFu);
  }

  int fd_;
  std::vector<uint32_t> block_;
  uint64_t offset_ = 0;
  uint64_t state_ = 0x9E3779B97F4A7C15ull;
};

struct Builder {
  onnx::GraphProto &g;
  DataWriter &data;
  std::string location;
  int counter = 0;

  std::string fresh(const std::string &base) { return base + "_" + std::to_string(counter++); }

  void weight(const std::string &name, std::vector<int64_t> dims) {
    uint64_t count = 1;
    for (int64_t d : dims)
      count *= static_cast<uint64_t>(d);
    uint64_t offset = data.write(count);
    onnx::TensorProto *t = g.add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims)
      t->add_dims(d);
    t->set_data_location(onnx::TensorProto::EXTERNAL);
    auto entry = [&](const char *k, const std::string &v) {
      auto *e = t->add_external_data();
      e->set_key(k);
      e->set_value(v);
    };
    entry("location", location);
    entry("offset", std::to_string(offset));
    entry("length", std::to_string(count * sizeof(float)));
  }

  void scalar(const std::string &name, float v) {
    onnx::TensorProto *t = g.add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_float_data(v);
  }

  std::string node(const std::string &op, std::vector<std::string> in, const std::string &hint = "") {
    std::string out = fresh(hint.empty() ? op : hint);
    onnx::NodeProto *n = g.add_node();
    n->set_op_type(op);
    n->set_name(out + "_node");
    for (const std::string &i : in)
      n->add_input(i);
    n->add_output(out);
    return out;
  }

  std::string rmsNorm(const std::string &x, const std::string &w) {
    std::string sq = node("Pow", {x, "two"});
    std::string mean = node("ReduceMean", {sq});
    onnx::NodeProto *rm = g.mutable_node(g.node_size() - 1);
    onnx::AttributeProto *axes = rm->add_attribute();
    axes->set_name("axes");
    axes->set_type(onnx::AttributeProto::INTS);
    axes->add_ints(-1);
    std::string eps = node("Add", {mean, "eps"});
    std::string root = node("Sqrt", {eps});
    std::string div = node("Div", {x, root});
    return node("Mul", {div, w});
  }
};

} // namespace

int main(int argc, char **argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s OUT.onnx SIZE_MB [HIDDEN]\n", argv[0]);
    return 2;
  }
  std::string out = argv[1];
  uint64_t sizeMb = std::strtoull(argv[2], nullptr, 10);
  int64_t hidden = argc > 3 ? std::atoll(argv[3]) : (sizeMb < 512 ? 256 : 2048);
  if (sizeMb == 0 || hidden <= 0 || hidden % 8 != 0) {
    std::fprintf(stderr, "bench_scale_llama: SIZE_MB must be positive and HIDDEN a positive multiple of 8\n");
    return 2;
  }
  int64_t inter = hidden * 11 / 4; // 2048 -> 5632, as in Llama-style 1B models
  int64_t vocab = 32000;
  uint64_t perLayer = (4 * hidden * hidden + 3 * hidden * inter + 2 * hidden) * 4;
  uint64_t fixed = (2 * vocab * hidden + hidden) * 4;
  uint64_t target = sizeMb << 20;
  int64_t layers = target > fixed + perLayer ? static_cast<int64_t>((target - fixed) / perLayer) : 1;

  std::string dataName = out.substr(out.rfind('/') == std::string::npos ? 0 : out.rfind('/') + 1) + ".data";
  std::string dataPath = out + ".data";
  int fd = ::open(dataPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    std::perror(("bench_scale_llama: " + dataPath).c_str());
    return 1;
  }
  DataWriter data(fd);

  onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("bench_scale_llama");
  onnx::OperatorSetIdProto *opset = m.add_opset_import();
  opset->set_domain("");
  opset->set_version(17);
  onnx::GraphProto &g = *m.mutable_graph();
  g.set_name("llama");
  Builder b{g, data, dataName};

  auto io = [&](onnx::ValueInfoProto *v, const std::string &name, int elem, std::vector<std::string> dims) {
    v->set_name(name);
    auto *tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(elem);
    for (const std::string &d : dims) {
      auto *dim = tt->mutable_shape()->add_dim();
      if (d[0] >= '0' && d[0] <= '9')
        dim->set_dim_value(std::atoll(d.c_str()));
      else
        dim->set_dim_param(d);
    }
  };
  io(g.add_input(), "input_ids", onnx::TensorProto::INT64, {"batch", "seq"});

  b.scalar("two", 2.0f);
  b.scalar("eps", 1e-6f);
  b.scalar("scale", 1.0f / std::sqrt(static_cast<float>(hidden)));
  b.weight("embed_tokens", {vocab, hidden});
  std::string h = b.node("Gather", {"embed_tokens", "input_ids"}, "embed");
  for (int64_t l = 0; l < layers; ++l) {
    std::string p = "layers." + std::to_string(l) + ".";
    b.weight(p + "input_norm", {hidden});
    b.weight(p + "q_proj", {hidden, hidden});
    b.weight(p + "k_proj", {hidden, hidden});
    b.weight(p + "v_proj", {hidden, hidden});
    b.weight(p + "o_proj", {hidden, hidden});
    b.weight(p + "post_norm", {hidden});
    b.weight(p + "gate_proj", {hidden, inter});
    b.weight(p + "up_proj", {hidden, inter});
    b.weight(p + "down_proj", {inter, hidden});

    std::string x = b.rmsNorm(h, p + "input_norm");
    std::string q = b.node("MatMul", {x, p + "q_proj"}, "q");
    std::string k = b.node("MatMul", {x, p + "k_proj"}, "k");
    std::string v = b.node("MatMul", {x, p + "v_proj"}, "v");
    std::string kt = b.node("Transpose", {k}, "kt");
    onnx::AttributeProto *perm = g.mutable_node(g.node_size() - 1)->add_attribute();
    perm->set_name("perm");
    perm->set_type(onnx::AttributeProto::INTS);
    for (int64_t a : {0, 2, 1})
      perm->add_ints(a);
    std::string scores = b.node("Mul", {b.node("MatMul", {q, kt}), "scale"});
    std::string probs = b.node("Softmax", {scores});
    std::string attn = b.node("MatMul", {probs, v}, "attn");
    std::string o = b.node("MatMul", {attn, p + "o_proj"}, "o");
    h = b.node("Add", {h, o}, "resid");
    std::string y = b.rmsNorm(h, p + "post_norm");
    std::string gate = b.node("MatMul", {y, p + "gate_proj"}, "gate");
    std::string silu = b.node("Mul", {gate, b.node("Sigmoid", {gate})}, "silu");
    std::string up = b.node("MatMul", {y, p + "up_proj"}, "up");
    std::string down = b.node("MatMul", {b.node("Mul", {silu, up}), p + "down_proj"}, "down");
    h = b.node("Add", {h, down}, "resid");
  }
  b.weight("final_norm", {hidden});
  b.weight("lm_head", {hidden, vocab});
  std::string logits = b.node("MatMul", {b.rmsNorm(h, "final_norm"), "lm_head"}, "logits");
  io(g.add_output(), logits, onnx::TensorProto::FLOAT, {"batch", "seq", std::to_string(vocab)});

  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    std::perror(("bench_scale_llama: " + dataPath).c_str());
    return 1;
  }
  std::ofstream os(out, std::ios::binary | std::ios::trunc);
  if (!m.SerializeToOstream(&os) || !os.flush()) {
    std::fprintf(stderr, "bench_scale_llama: cannot write %s\n", out.c_str());
    return 1;
  }
  std::printf("%s: %lld layers, hidden %lld, intermediate %lld, %d initializers, data %.1f MB\n", out.c_str(),
              static_cast<long long>(layers), static_cast<long long>(hidden), static_cast<long long>(inter),
              g.initializer_size(), static_cast<double>(data.size()) / 1e6);
  return 0;
}
