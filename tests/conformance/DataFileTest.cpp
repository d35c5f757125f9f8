//===- tests/conformance/DataFileTest.cpp - Reading and writing .pb data --===//
//
// The library's data files (frontend/DataFile, backend/Writer): every kind
// written and read back equal (tensors of numbers and strings, sequences
// empty or not, optionals empty or holding a tensor or a sequence), the
// exact bytes of the small messages as onnx-data.proto defines them, the
// kind guessed from the bytes alone, and strict reading: a file of another
// kind, a truncated one, a tensor without data type, with a segment or with
// data that does not fit its dims is an error naming the file; a bool
// int32_data entry is true when not 0 (256 too); every
// truncation and many byte changes of real conformance files read without
// a crash, as a value that is whole or as an error. The file names outputs
// are written under (dataFileNames): unchanged names keep theirs, names
// that would share a file get distinct ones, whatever their order.
//
//===----------------------------------------------------------------------===//
#include "backend/Writer.h"
#include "frontend/DataFile.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <vector>

using namespace onnxslim;
using Kind = DataValue::Kind;

namespace {

TensorPtr floats(std::vector<int64_t> dims, std::vector<float> values) {
  return Tensor::fromValues(DataType::Float, std::move(dims), values);
}

std::string serialize(const DataValue &v) {
  std::string bytes, error;
  EXPECT_TRUE(serializeDataValue(v, bytes, error)) << error;
  return bytes;
}

/// Given bytes and a kind, Result: whether they read as that kind; `error` set otherwise.
bool read(const std::string &bytes, Kind kind, DataValue &out, std::string &error) {
  auto owned = std::make_shared<const std::string>(bytes);
  const auto *p = reinterpret_cast<const uint8_t *>(owned->data());
  return loadDataFromBytes(p, owned->size(), owned, "f.pb", ".", kind, out, error);
}

void expectSameTensors(const std::vector<TensorPtr> &a, const std::vector<TensorPtr> &b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_TRUE(a[i]->sameContent(*b[i])) << "element " << i;
}

TEST(DataFile, EveryKindRoundTrips) {
  TensorPtr t = floats({2}, {1.5f, -2});
  TensorPtr s = Tensor::fromStrings({3}, {"monday", "", "zürich"});
  std::vector<DataValue> values = {
      DataValue::ofTensor(t, "t"),
      DataValue::ofTensor(s, "strings"),
      DataValue::ofSequence({t, floats({1, 1}, {7})}, "seq"),
      DataValue::ofSequence({}, "empty_seq"),
      DataValue::ofOptional(std::make_shared<DataValue>(DataValue::ofTensor(t)), "opt_tensor"),
      DataValue::ofOptional(std::make_shared<DataValue>(DataValue::ofSequence({t, t})), "opt_seq"),
      DataValue::ofOptional(nullptr, "opt_empty"),
  };
  for (const DataValue &v : values) {
    SCOPED_TRACE(v.name);
    std::string error;
    DataValue back;
    ASSERT_TRUE(read(serialize(v), v.kind, back, error)) << error;
    EXPECT_EQ(back.kind, v.kind);
    EXPECT_EQ(back.name, v.name);
    switch (v.kind) {
    case Kind::Tensor:
      EXPECT_TRUE(back.tensor->sameContent(*v.tensor));
      break;
    case Kind::Sequence:
      expectSameTensors(back.sequence, v.sequence);
      break;
    case Kind::Optional:
      ASSERT_EQ(back.optional != nullptr, v.optional != nullptr);
      if (v.optional) {
        EXPECT_EQ(back.optional->kind, v.optional->kind);
        if (v.optional->kind == Kind::Tensor)
          EXPECT_TRUE(back.optional->tensor->sameContent(*v.optional->tensor));
        else
          expectSameTensors(back.optional->sequence, v.optional->sequence);
      }
      break;
    }
  }
}

TEST(DataFile, SmallMessagesHaveTheSpecifiedBytes) {
  // SequenceProto: name (1) "s", elem_type (2) TENSOR (1).
  EXPECT_EQ(serialize(DataValue::ofSequence({}, "s")), std::string("\x0a\x01s\x10\x01", 5));
  // OptionalProto, empty: elem_type UNDEFINED (0) unless its type is known.
  EXPECT_EQ(serialize(DataValue::ofOptional(nullptr, "o")), std::string("\x0a\x01o\x10\x00", 5));
  DataValue ofSeq = DataValue::ofOptional(nullptr, "o");
  ofSeq.emptyOf = Type::sequence(Type::tensor(DataType::Float));
  EXPECT_EQ(serialize(ofSeq), std::string("\x0a\x01o\x10\x03", 5));
  // OptionalProto holding a sequence: elem_type SEQUENCE (3), sequence_value (5).
  std::string held = serialize(DataValue::ofOptional(std::make_shared<DataValue>(DataValue::ofSequence({})), ""));
  EXPECT_EQ(held, std::string("\x10\x03\x2a\x02\x10\x01", 6));
}

TEST(DataFile, KindIsGuessedFromTheBytes) {
  TensorPtr t = floats({2}, {1, 2});
  auto file = [&](const DataValue &v, const std::string &name) {
    std::string path = ::testing::TempDir() + "datafile-" + name + ".pb";
    std::string error;
    EXPECT_TRUE(saveDataFile(v, path, error)) << error;
    return path;
  };
  struct Expect {
    DataValue value;
    Kind kind;
  };
  std::vector<Expect> cases = {
      {DataValue::ofTensor(t, "a"), Kind::Tensor},
      {DataValue::ofSequence({t, t}, "b"), Kind::Sequence},
      {DataValue::ofOptional(nullptr, "c"), Kind::Optional},
  };
  for (const Expect &e : cases) {
    std::string path = file(e.value, e.value.name), error;
    DataValue back;
    ASSERT_TRUE(loadDataFileAnyKind(path, back, error)) << error;
    EXPECT_EQ(back.kind, e.kind) << path;
    EXPECT_EQ(back.name, e.value.name);
  }
}

TEST(DataFile, ReadingIsStrict) {
  std::string tensorBytes = serialize(DataValue::ofTensor(floats({2}, {1, 2}), "x"));
  std::string seqBytes = serialize(DataValue::ofSequence({floats({2}, {1, 2}), floats({1}, {3})}, "s"));
  DataValue out;
  std::string error;

  EXPECT_FALSE(read(tensorBytes, Kind::Sequence, out, error));
  EXPECT_NE(error.find("f.pb: the file holds a TensorProto, not a SequenceProto"), std::string::npos) << error;
  EXPECT_FALSE(read(seqBytes, Kind::Tensor, out, error));
  EXPECT_NE(error.find("holds a SequenceProto"), std::string::npos) << error;
  EXPECT_FALSE(read(seqBytes, Kind::Optional, out, error));
  EXPECT_NE(error.find("holds a SequenceProto"), std::string::npos) << error;

  EXPECT_FALSE(read(tensorBytes.substr(0, tensorBytes.size() - 1), Kind::Tensor, out, error));
  EXPECT_NE(error.find("truncated"), std::string::npos) << error;
  EXPECT_FALSE(read(seqBytes.substr(0, seqBytes.size() - 1), Kind::Sequence, out, error));
  EXPECT_NE(error.find("truncated"), std::string::npos) << error;
  EXPECT_FALSE(read("", Kind::Tensor, out, error));
  EXPECT_NE(error.find("empty"), std::string::npos) << error;

  // dims (1) = 2, no data_type.
  EXPECT_FALSE(read(std::string("\x08\x02", 2), Kind::Tensor, out, error));
  EXPECT_NE(error.find("no data_type"), std::string::npos) << error;
  // dims 2, FLOAT, one float in float_data (4): two are needed.
  EXPECT_FALSE(read(std::string("\x08\x02\x10\x01\x25\x00\x00\x80\x3f", 9), Kind::Tensor, out, error));
  EXPECT_NE(error.find("does not fit"), std::string::npos) << error;
  // dims 1, FLOAT, segment (3) {begin 0}, one float.
  EXPECT_FALSE(read(std::string("\x08\x01\x10\x01\x1a\x02\x08\x00\x25\x00\x00\x80\x3f", 13), Kind::Tensor, out, error));
  EXPECT_NE(error.find("segment"), std::string::npos) << error;
  // dims 2^60 with no data: refused, not a tensor the runtime would read past.
  EXPECT_FALSE(read(std::string("\x08\x80\x80\x80\x80\x80\x80\x80\x80\x10\x10\x01", 12), Kind::Tensor, out, error));
  // A sequence of sequences is not supported, and says so.
  EXPECT_FALSE(read(std::string("\x10\x03\x2a\x00", 4), Kind::Sequence, out, error));
  EXPECT_NE(error.find("not supported"), std::string::npos) << error;
}

/// A value read without error is whole: every tensor it holds has exactly
/// the bytes (or strings) its type and dims need.
bool whole(const DataValue &v) {
  auto ok = [](const TensorPtr &t) { return t && t->isConsistent(); };
  switch (v.kind) {
  case Kind::Tensor:
    return ok(v.tensor);
  case Kind::Sequence:
    return std::all_of(v.sequence.begin(), v.sequence.end(), ok);
  case Kind::Optional:
    return !v.optional || whole(*v.optional);
  }
  return false;
}

TEST(DataFile, DamagedFilesReadAsWholeValuesOrErrors) {
  const char *files[] = {"test_identity_sequence/test_data_set_0/input_0.pb",
                         "test_identity_opt/test_data_set_0/input_0.pb",
                         "test_optional_get_element/test_data_set_0/input_0.pb",
                         "test_strnormalizer_export_monday_casesensintive_lower/test_data_set_0/input_0.pb",
                         "test_cast_BFLOAT16_to_FLOAT/test_data_set_0/input_0.pb"};
  size_t reads = 0;
  for (const char *f : files) {
    std::filesystem::path path = std::filesystem::path(ONNXSLIM_TESTDATA_DIR) / "node" / f;
    ASSERT_TRUE(std::filesystem::exists(path)) << path << " missing: apt-get install libonnx-testdata";
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string original = ss.str();
    std::vector<std::string> damaged;
    for (size_t n = 0; n < original.size(); ++n)
      damaged.push_back(original.substr(0, n));
    for (size_t i = 0; i < original.size(); ++i)
      for (unsigned char x : {0x00, 0xFF, 0x80, 0x7F}) {
        std::string d = original;
        d[i] = static_cast<char>(x);
        damaged.push_back(d);
      }
    for (const std::string &d : damaged)
      for (Kind k : {Kind::Tensor, Kind::Sequence, Kind::Optional}) {
        DataValue out;
        std::string error;
        ++reads;
        if (read(d, k, out, error))
          EXPECT_TRUE(whole(out)) << f << ": a damaged file read as a value that is not whole";
        else
          EXPECT_EQ(error.rfind("f.pb: ", 0), 0u) << error;
      }
  }
  EXPECT_GT(reads, 3000u); // the loops ran over every damaged copy
}

TEST(DataFile, BoolInt32DataIsTrueWhenNotZero) {
  // TensorProto{dims: [5], data_type: BOOL, int32_data: [0, 1, 5, 256, -1]}
  // (packed): 256's low byte is 0, but 256 is true, as every entry not 0.
  const std::string bytes("\x08\x05\x10\x09\x2a\x0f\x00\x01\x05\x80\x02"
                          "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01",
                          21);
  DataValue v;
  std::string error;
  ASSERT_TRUE(read(bytes, Kind::Tensor, v, error)) << error;
  ASSERT_EQ(v.tensor->dtype(), DataType::Bool);
  ASSERT_EQ(v.tensor->numElements(), 5);
  std::vector<bool> got;
  for (size_t i = 0; i < 5; ++i)
    got.push_back(v.tensor->at<bool>(i));
  EXPECT_EQ(got, (std::vector<bool>{false, true, true, true, true}));
  // Entries that fit a byte keep it (and so write back as they were).
  EXPECT_EQ(v.tensor->rawData()[2], 5);
}

/// The file names `onnxslim run --output-dir` and tools/oracle give a list
/// of output names (backend/Writer.h dataFileNames).
std::vector<std::string> files(std::vector<std::string> names) { return dataFileNames(names); }

TEST(DataFileNames, NamesThatNeedNoChangeKeepThem) {
  EXPECT_EQ(files({"y", "logits", "a.b-c_d", "X9"}),
            (std::vector<std::string>{"y.pb", "logits.pb", "a.b-c_d.pb", "X9.pb"}));
  // A changed name alone on its stem: no suffix.
  EXPECT_EQ(files({"logits:0", "onnx::MatMul_12", "x y"}),
            (std::vector<std::string>{"logits_0.pb", "onnx__MatMul_12.pb", "x_y.pb"}));
  // Every UTF-8 byte outside the set is one '_' (as the oracle counts them).
  EXPECT_EQ(files({"z\xc3\xbcrich"}), (std::vector<std::string>{"z__rich.pb"}));
}

TEST(DataFileNames, CollidingNamesStayApart) {
  // The unchanged name keeps a_b.pb; the others get their FNV-1a hash.
  std::vector<std::string> got = files({"a/b", "a_b", "a:b"});
  EXPECT_EQ(got, (std::vector<std::string>{"a_b.3a8e75c1.pb", "a_b.pb", "a_b.08bd8540.pb"}));
  // Whatever the order, and with no unchanged name, each name keeps its file.
  EXPECT_EQ(files({"a:b", "a/b"}), (std::vector<std::string>{"a_b.08bd8540.pb", "a_b.3a8e75c1.pb"}));
  EXPECT_EQ(files({"a:b", "a_b", "a/b"}),
            (std::vector<std::string>{"a_b.08bd8540.pb", "a_b.pb", "a_b.3a8e75c1.pb"}));
}

TEST(DataFileNames, ClashesWithHashedNamesAreNumbered) {
  // a_b.3a8e75c1 needs no change and keeps its file; a/b takes ".2".
  EXPECT_EQ(files({"a/b", "a_b", "a_b.3a8e75c1"}),
            (std::vector<std::string>{"a_b.3a8e75c1.2.pb", "a_b.pb", "a_b.3a8e75c1.pb"}));
  // Many names on one stem: all distinct.
  std::vector<std::string> names;
  for (char c : std::string("/:;!?@# $%^&*()[]{}<>|~`'\"+,="))
    names.push_back(std::string("t") + c + "0");
  names.push_back("t_0");
  std::vector<std::string> got = files(names);
  std::set<std::string> distinct(got.begin(), got.end());
  EXPECT_EQ(distinct.size(), names.size());
  EXPECT_EQ(got.back(), "t_0.pb");
}

TEST(DataFileNames, TheSameNameTwiceIsOneFile) {
  EXPECT_EQ(files({"yb", "yb", "a/b", "a:b", "a/b"}),
            (std::vector<std::string>{"yb.pb", "yb.pb", "a_b.3a8e75c1.pb", "a_b.08bd8540.pb", "a_b.3a8e75c1.pb"}));
  EXPECT_TRUE(files({}).empty());
}

} // namespace
