//===- tests/roundtrip/TensorEncodingTest.cpp - Typed tensor fields -------===//
//
// Tensors stored in the typed repeated fields (float_data, int32_data for
// the narrow types, int64_data, string_data, double_data, uint64_data) load
// as canonical little-endian bytes and are written back identically; mixed
// or mismatched fields are errors; standalone tensor files round-trip.
//
//===----------------------------------------------------------------------===//
#include "tests/roundtrip/ProtoBuilders.h"
#include "tests/roundtrip/RoundTripUtil.h"

#include "backend/Writer.h"
#include "frontend/Loader.h"

#include <filesystem>

using namespace onnxslim;
using namespace onnxslim::testing;

namespace {

/// A model whose only initializer is `t`, used by an Identity.
onnx::ModelProto modelWith(const onnx::TensorProto &t) {
  onnx::ModelProto m = baseModel();
  auto &g = *m.mutable_graph();
  *g.add_initializer() = t;
  addNode(g, "Identity", {t.name()}, {"out"});
  auto *o = g.add_output();
  o->set_name("out");
  return m;
}

onnx::TensorProto tensor(int dtype, int64_t n) {
  onnx::TensorProto t;
  t.set_name("t");
  t.set_data_type(dtype);
  t.add_dims(n);
  return t;
}

/// Loads the model holding `t`, checks its bytes, and checks the round trip.
void check(const onnx::TensorProto &t, const std::vector<uint8_t> &bytes) {
  onnx::ModelProto m = modelWith(t);
  std::string error;
  auto model = loadModelFromString(m.SerializeAsString(), "typed.onnx", ".", error);
  ASSERT_TRUE(model) << error;
  const Tensor &loaded = *model->graph()->initializers()[0]->initializer();
  EXPECT_EQ(loaded.encoding, TensorEncoding::Typed);
  EXPECT_EQ(std::vector<uint8_t>(loaded.rawData(), loaded.rawData() + loaded.byteSize()), bytes);
  std::string out = serializeModel(*model, error);
  ASSERT_FALSE(out.empty()) << error;
  std::string diff = compareModels(m.SerializeAsString(), out);
  EXPECT_TRUE(diff.empty()) << diff;
}

} // namespace

TEST(TensorEncoding, FloatData) {
  auto t = tensor(onnx::TensorProto::FLOAT, 2);
  t.add_float_data(1.0f);
  t.add_float_data(-0.0f);
  check(t, {0, 0, 0x80, 0x3F, 0, 0, 0, 0x80});
}

TEST(TensorEncoding, Int32DataNarrowTypes) {
  auto f16 = tensor(onnx::TensorProto::FLOAT16, 2);
  f16.add_int32_data(0x3C00);
  f16.add_int32_data(0xBC00);
  check(f16, {0x00, 0x3C, 0x00, 0xBC});

  auto b = tensor(onnx::TensorProto::BOOL, 3);
  b.add_int32_data(1);
  b.add_int32_data(0);
  b.add_int32_data(1);
  check(b, {1, 0, 1});

  auto i8 = tensor(onnx::TensorProto::INT8, 3);
  i8.add_int32_data(-5);
  i8.add_int32_data(127);
  i8.add_int32_data(-128);
  check(i8, {0xFB, 0x7F, 0x80});

  auto u8 = tensor(onnx::TensorProto::UINT8, 2);
  u8.add_int32_data(255);
  u8.add_int32_data(7);
  check(u8, {0xFF, 0x07});

  auto i16 = tensor(onnx::TensorProto::INT16, 1);
  i16.add_int32_data(-300);
  check(i16, {0xD4, 0xFE});

  auto u16 = tensor(onnx::TensorProto::UINT16, 1);
  u16.add_int32_data(65535);
  check(u16, {0xFF, 0xFF});

  auto bf16 = tensor(onnx::TensorProto::BFLOAT16, 1);
  bf16.add_int32_data(0xC0A0);
  check(bf16, {0xA0, 0xC0});

  auto f8 = tensor(onnx::TensorProto::FLOAT8E4M3FN, 2);
  f8.add_int32_data(0x7E);
  f8.add_int32_data(0x81);
  check(f8, {0x7E, 0x81});

  auto i4 = tensor(onnx::TensorProto::INT4, 3); // packed: two elements per entry
  i4.add_int32_data(0xF1);
  i4.add_int32_data(0x07);
  check(i4, {0xF1, 0x07});

  auto i32 = tensor(onnx::TensorProto::INT32, 1);
  i32.add_int32_data(-7);
  check(i32, {0xF9, 0xFF, 0xFF, 0xFF});
}

TEST(TensorEncoding, Int64StringDoubleUInt64Data) {
  auto i64 = tensor(onnx::TensorProto::INT64, 1);
  i64.add_int64_data(-2);
  check(i64, {0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF});

  auto d = tensor(onnx::TensorProto::DOUBLE, 1);
  d.add_double_data(1.0);
  check(d, {0, 0, 0, 0, 0, 0, 0xF0, 0x3F});

  auto u32 = tensor(onnx::TensorProto::UINT32, 1);
  u32.add_uint64_data(4000000000u);
  check(u32, {0x00, 0x28, 0x6B, 0xEE});

  auto u64 = tensor(onnx::TensorProto::UINT64, 1);
  u64.add_uint64_data((uint64_t{1} << 63) + 5);
  check(u64, {5, 0, 0, 0, 0, 0, 0, 0x80});

  auto c64 = tensor(onnx::TensorProto::COMPLEX64, 1);
  c64.add_float_data(1.0f);
  c64.add_float_data(2.0f);
  check(c64, {0, 0, 0x80, 0x3F, 0, 0, 0, 0x40});

  auto c128 = tensor(onnx::TensorProto::COMPLEX128, 1);
  c128.add_double_data(1.0);
  c128.add_double_data(-1.0);
  check(c128, {0, 0, 0, 0, 0, 0, 0xF0, 0x3F, 0, 0, 0, 0, 0, 0, 0xF0, 0xBF});

  auto s = tensor(onnx::TensorProto::STRING, 2);
  s.add_string_data("hello");
  s.add_string_data(std::string("\0bin", 4));
  check(s, {});
}

TEST(TensorEncoding, EmptyAndExplicitFields) {
  auto empty = tensor(onnx::TensorProto::FLOAT, 0);
  check(empty, {});
  auto raw = tensor(onnx::TensorProto::FLOAT, 0);
  raw.set_raw_data(""); // present but empty: stays raw
  raw.set_doc_string("");
  raw.set_data_location(onnx::TensorProto::DEFAULT);
  raw.mutable_segment()->set_begin(0);
  raw.mutable_segment()->set_end(0);
  onnx::ModelProto m = modelWith(raw);
  std::string error;
  auto model = loadModelFromString(m.SerializeAsString(), "raw.onnx", ".", error);
  ASSERT_TRUE(model) << error;
  EXPECT_EQ(model->graph()->initializers()[0]->initializer()->encoding, TensorEncoding::Raw);
  EXPECT_TRUE(compareModels(m.SerializeAsString(), serializeModel(*model)).empty());
}

TEST(TensorEncoding, MismatchedFieldsAreErrors) {
  auto wrong = tensor(onnx::TensorProto::FLOAT, 1);
  wrong.add_int64_data(3);
  std::string error;
  EXPECT_FALSE(loadModelFromString(modelWith(wrong).SerializeAsString(), "bad.onnx", ".", error));
  EXPECT_NE(error.find("bad.onnx: graph 'g' / initializer 't': int64_data cannot hold data of type float"),
            std::string::npos)
      << error;

  auto both = tensor(onnx::TensorProto::FLOAT, 1);
  both.add_float_data(1);
  both.set_raw_data(std::string(4, '\0'));
  EXPECT_FALSE(loadModelFromString(modelWith(both).SerializeAsString(), "bad.onnx", ".", error));
  EXPECT_NE(error.find("both in raw_data and in a typed field"), std::string::npos) << error;
}

TEST(TensorEncoding, ConstantAttributeTensors) {
  onnx::ModelProto m = baseModel();
  auto &g = *m.mutable_graph();
  auto *c = addNode(g, "Constant", {}, {"k"}, "const");
  auto *a = c->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  auto *t = a->mutable_t();
  t->set_data_type(onnx::TensorProto::INT64);
  t->add_dims(2);
  t->add_int64_data(4);
  t->add_int64_data(-4);
  auto *c2 = addNode(g, "Constant", {}, {"k2"}, "const2");
  auto *a2 = c2->add_attribute();
  a2->set_name("value");
  a2->set_type(onnx::AttributeProto::TENSOR);
  a2->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
  a2->mutable_t()->set_raw_data(std::string(4, '\x01'));
  addOutput(g, "k", 7);
  addOutput(g, "k2");
  std::string error;
  auto model = loadModelFromString(m.SerializeAsString(), "c.onnx", ".", error);
  ASSERT_TRUE(model) << error;
  EXPECT_TRUE(compareModels(m.SerializeAsString(), serializeModel(*model)).empty());
}

TEST(TensorEncoding, TensorFilesRoundTrip) {
  TempDir dir;
  auto t = tensor(onnx::TensorProto::INT16, 2);
  t.add_int32_data(-1);
  t.add_int32_data(2);
  writeFile(dir.file("in.pb"), t.SerializeAsString());
  std::string error;
  TensorPtr loaded = loadTensorFile(dir.file("in.pb"), error);
  ASSERT_TRUE(loaded) << error;
  EXPECT_EQ(loaded->name, "t");
  EXPECT_EQ(loaded->at<int16_t>(0), -1);
  ASSERT_TRUE(saveTensorFile(*loaded, dir.file("out.pb"), error)) << error;
  EXPECT_EQ(readFile(dir.file("out.pb")), t.SerializeAsString());

  // A conformance input, raw_data viewed in the mapping.
  std::string pb = std::string(ONNXSLIM_TESTDATA_DIR) + "/node/test_add/test_data_set_0/input_0.pb";
  if (std::filesystem::exists(pb)) {
    TensorPtr in = loadTensorFile(pb, error);
    ASSERT_TRUE(in) << error;
    EXPECT_TRUE(in->buffer().isMapped());
    EXPECT_TRUE(in->isConsistent());
    ASSERT_TRUE(saveTensorFile(*in, dir.file("copy.pb"), error)) << error;
    EXPECT_EQ(readFile(dir.file("copy.pb")), readFile(pb));
  }

  auto bytes = std::make_shared<const std::string>(t.SerializeAsString());
  TensorPtr fromBytes = loadTensorFromBytes(reinterpret_cast<const uint8_t *>(bytes->data()), bytes->size(),
                                            bytes, "embedded", ".", error);
  ASSERT_TRUE(fromBytes) << error;
  EXPECT_TRUE(fromBytes->sameContent(*loaded));
  EXPECT_FALSE(loadTensorFromBytes(reinterpret_cast<const uint8_t *>(bytes->data()), 3, bytes, "embedded",
                                   ".", error));
  EXPECT_EQ(error.rfind("embedded: malformed protobuf", 0), 0u) << error;

  EXPECT_FALSE(loadTensorFile(dir.file("missing.pb"), error));
  EXPECT_NE(error.find("missing.pb"), std::string::npos);
}

TEST(TensorEncoding, StringTensorsMadeInMemoryUseStringData) {
  // A tensor built from strings (as a folding pass or `onnxslim run` makes
  // them) carries the default Raw encoding; it is still written as
  // string_data, with no raw_data field (ONNX Runtime refuses one, even empty).
  auto made = Tensor::fromStrings({2}, {"a", ""});
  ASSERT_EQ(made->encoding, TensorEncoding::Raw);
  made->name = "s";
  TempDir dir;
  std::string error;
  ASSERT_TRUE(saveTensorFile(*made, dir.file("s.pb"), error)) << error;
  onnx::TensorProto written;
  ASSERT_TRUE(written.ParseFromString(readFile(dir.file("s.pb"))));
  EXPECT_FALSE(written.has_raw_data());
  ASSERT_EQ(written.string_data_size(), 2);
  EXPECT_EQ(written.string_data(0), "a");
  EXPECT_EQ(written.string_data(1), "");
  EXPECT_EQ(written.data_type(), onnx::TensorProto::STRING);

  // The same as an initializer of a model.
  Model m;
  m.irVersion = 8;
  m.opsetImport.push_back(OpsetId{"", 17, {}});
  m.setGraph(std::make_unique<Graph>());
  Value *init = m.graph()->addInitializer("s", made);
  m.graph()->addOutput(init);
  onnx::ModelProto mp;
  ASSERT_TRUE(mp.ParseFromString(serializeModel(m)));
  ASSERT_EQ(mp.graph().initializer_size(), 1);
  EXPECT_FALSE(mp.graph().initializer(0).has_raw_data());
  EXPECT_EQ(mp.graph().initializer(0).string_data_size(), 2);
}
