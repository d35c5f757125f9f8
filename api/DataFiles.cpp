//===- api/DataFiles.cpp - The values models take and give, as files ------===//
//
// readTensorFile(), readInputFile(), serializeValue(), valueFileNames() and
// writeFile() of onnxslim/onnxslim.h: tensors from .npy (frontend/Npy.h)
// or TensorProto files (frontend/Loader.h); a graph input's value from the
// kind of file its type declares (frontend/DataFile.h); values written as
// TensorProto, SequenceProto or OptionalProto (backend/Writer.h), under
// the file names `onnxslim run` and the ONNX Runtime oracle share; files
// written atomically.
//
//===----------------------------------------------------------------------===//
#include "onnxslim/onnxslim.h"

#include "api/RunValues.h"
#include "backend/Writer.h"
#include "frontend/DataFile.h"
#include "frontend/Loader.h"
#include "frontend/Npy.h"
#include "runtime/Inputs.h"

namespace onnxslim {

Result<TensorPtr> readTensorFile(const std::string &path) {
  std::string error;
  bool npy = path.size() > 4 && path.compare(path.size() - 4, 4, ".npy") == 0;
  TensorPtr t = npy ? loadNpyFile(path, error) : loadTensorFile(path, error);
  if (!t)
    return Status::error(error);
  return t;
}

Result<std::pair<std::string, RunValue>> readInputFile(const Model &model, const std::string &path,
                                                       const std::string &input) {
  if (!model.graph())
    return Status::error("the model has no graph");
  size_t index = 0;
  DataValue value;
  std::string error;
  if (!loadInputFile(*model.graph(), input, path, index, value, error))
    return Status::error(error);
  // Through the runtime's value: tensors whose bytes sit at an offset
  // kernels cannot view in place are copied once here.
  return std::pair<std::string, RunValue>(model.graph()->input(index)->name(), fromRuntime(rt::fromDataValue(value)));
}

Result<std::string> serializeValue(const RunValue &value, const std::string &name) {
  DataValue data;
  rt::Status s = rt::toDataValue(toRuntime(value), name, data);
  if (!s.ok())
    return Status::error(s.message());
  std::string bytes, error;
  if (!serializeDataValue(data, bytes, error))
    return Status::error("'" + name + "': " + error);
  return bytes;
}

std::vector<std::string> valueFileNames(const std::vector<std::string> &names) { return dataFileNames(names); }

Status writeFile(const std::string &path, std::string_view bytes) {
  std::string error;
  auto write = [&](std::ostream &os, std::string &) {
    os.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return static_cast<bool>(os);
  };
  return writeFileAtomically(path, write, error) ? Status() : Status::error(error);
}

} // namespace onnxslim
