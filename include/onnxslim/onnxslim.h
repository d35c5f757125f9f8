//===- onnxslim/onnxslim.h - The onnxslim library ---------------*- C++ -*-===//
//
// What the command line does, as functions: read a model (binary ONNX or
// ONNX textual syntax, from a path or from bytes), optimize it with the
// default pipeline or a pipeline of your own, compare two models' outputs,
// run a model in the interpreter, and write it back (atomically, external
// data as the command line does).
//
//   #include <onnxslim/onnxslim.h>
//
//   auto model = onnxslim::load("in.onnx");
//   if (!model) return fail(model.error());
//   onnxslim::OptimizeReport report = onnxslim::optimize(**model);
//   if (!report.status) return fail(report.status.message());
//   if (onnxslim::Status saved = onnxslim::save(**model, "out.onnx"); !saved)
//     return fail(saved.message());
//
// optimize() with default options gives exactly the model `onnxslim IN OUT`
// writes (the command line is built on this function). Nothing here exits,
// throws for a bad model, or prints: every failure is a value whose message
// starts with one line naming the file and, where there is one, the node
// and op (a comparison's details follow on further lines).
//
// The model is the IR (onnxslim/ir/IR.h); compilers that add passes of their
// own register them in a PassRegistry (onnxslim/passes.h) and name them in
// OptimizeOptions::pipeline. docs/API.md documents all of it.
//
// Only the standard library and the IR headers are included: nothing of
// protobuf, xtensor or xsimd.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/IR.h"
#include "ir/Tensor.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace onnxslim {

class PassRegistry;

/// The library's version, "MAJOR.MINOR.PATCH" (the tool's --version too).
std::string_view version();

/// Given a count (0: the number of cores), Execute: sizes the one pool of
/// threads the interpreter uses (folding, model checks, run, verify) for
/// every later call; 1 until called. Results do not depend on the count.
void setThreadCount(int threads);
/// The pool's size, the calling thread included.
int threadCount();

/// The newest ONNX versions this build reads, writes and validates.
struct SupportedVersions {
  int64_t irVersion = 0;    ///< ModelProto.ir_version
  int64_t defaultOpset = 0; ///< the default (ai.onnx) domain's opset
};
SupportedVersions supportedVersions();

//===----------------------------------------------------------------------===//
// Errors as values
//===----------------------------------------------------------------------===//

/// Success, or a message saying what failed: its first line names the file
/// and, where there is one, the node and op; details may follow.
class Status {
public:
  /// Success.
  Status() = default;
  /// Given a message, Result: a failure carrying it.
  static Status error(std::string message) {
    Status s;
    s.message_ = message.empty() ? "unknown error" : std::move(message);
    return s;
  }
  bool ok() const { return message_.empty(); }
  explicit operator bool() const { return ok(); }
  /// The failure's message ("" on success).
  const std::string &message() const { return message_; }

private:
  std::string message_;
};

/// A value, or the Status saying why there is none.
template <typename T> class Result {
public:
  Result(T value) : value_(std::move(value)) {}
  Result(Status failure) : status_(std::move(failure)) {
    if (status_.ok())
      status_ = Status::error("a Result made from a successful Status holds no value");
  }
  bool ok() const { return value_.has_value(); }
  explicit operator bool() const { return ok(); }
  const Status &status() const { return status_; }
  /// The failure's message ("" on success).
  const std::string &error() const { return status_.message(); }
  /// The value; only when ok().
  T &value() { return *value_; }
  const T &value() const { return *value_; }
  T &operator*() { return *value_; }
  const T &operator*() const { return *value_; }
  T *operator->() { return &*value_; }
  const T *operator->() const { return &*value_; }

private:
  std::optional<T> value_;
  Status status_;
};

//===----------------------------------------------------------------------===//
// Reading and writing models
//===----------------------------------------------------------------------===//

enum class ModelFormat {
  Auto,   ///< Reading: text for *.txt / *.onnxtxt, binary for *.onnx, else
          ///< sniffed (text starts with '<'). Writing: text for *.txt /
          ///< *.onnxtxt, else binary.
  Binary, ///< ONNX protobuf (ModelProto).
  Text,   ///< ONNX textual syntax (docs/TextFormat.md).
};

struct ReadOptions {
  ModelFormat format = ModelFormat::Auto;
  /// Map the files named by external_data entries. When false such tensors
  /// have no bytes: the model can be inspected but not saved or run.
  bool loadExternalData = true;
  /// loadFromBytes(): the name errors start with, and the directory that
  /// external_data locations are relative to.
  std::string name = "<bytes>";
  std::string baseDir = ".";
  /// Check the IR's invariants and the model against the ONNX spec after
  /// reading; a model that fails is refused (the message names the first
  /// problem). optimize() checks anyway; this is for load-and-inspect.
  bool validate = false;
};

/// Given a path, Execute: reads the model (its external data mapped, not
/// copied), Result: the model, or why not.
Result<std::unique_ptr<Model>> load(const std::string &path, const ReadOptions &options = {});
/// Given the bytes of a model (binary or text), Execute: reads it, Result:
/// the model, or why not. Tensors view `bytes`, which the model keeps.
Result<std::unique_ptr<Model>> loadFromBytes(std::string bytes, const ReadOptions &options = {});

struct WriteOptions {
  ModelFormat format = ModelFormat::Auto;
  /// Binary only: tensors of `externalDataThreshold` bytes and more go to an
  /// external data file beside the output (`externalDataFile`, default
  /// "<output file name>.data"). A model over protobuf's 2 GB limit is
  /// written that way even when this is false (onNote says so).
  bool externalData = false;
  size_t externalDataThreshold = 1024;
  std::string externalDataFile;
  /// Text only: print every constant in full, so that the text reads back
  /// to the same model (false elides large ones: for reading, not loading).
  bool printLargeConstants = true;
  /// Validate the model against the ONNX spec first and refuse an invalid
  /// one (nothing written).
  bool validate = false;
  /// Receives notes such as the automatic switch to external data.
  std::function<void(const std::string &)> onNote;
};

/// Given a model and a path, Execute: writes it atomically (a temporary file
/// renamed over `path`; a symlink's target is replaced, /dev/null written
/// through, directories and devices refused), Result: success or why not.
Status save(const Model &model, const std::string &path, const WriteOptions &options = {});
/// Given a model, Result: its bytes in `options.format` (Auto: binary).
/// External data cannot go to bytes (nor into text): that is an error.
Result<std::string> saveToBytes(const Model &model, const WriteOptions &options = {});

/// Given a model and the name messages give it (its path), Result: every
/// problem `onnxslim check` prints, one line each: the IR's broken
/// invariants ("FILE: IR invariant broken: ...", at most 20; a bug, or a
/// malformed input the reader let through), then what the ONNX
/// specification forbids (at most 100); empty for a valid model.
std::vector<std::string> validateModel(const Model &model, const std::string &file);

//===----------------------------------------------------------------------===//
// Optimizing
//===----------------------------------------------------------------------===//

/// Counts of one model (subgraphs included, except initializers: main graph).
struct ModelCounts {
  size_t nodes = 0;
  size_t initializers = 0;
  /// Bytes of initializer and Constant-node tensors.
  size_t constantBytes = 0;
  /// Nodes per op type: "Conv", or "domain.Op" outside the default domain.
  std::map<std::string, size_t> opCounts;
};

/// Given a model, Result: its counts.
ModelCounts countModel(const Model &model);

enum class ModelCheckMode {
  /// The default pipeline compares outputs when the model's constants fit
  /// in 256 MiB and every op has a deterministic kernel, and says why not
  /// otherwise (OptimizeReport::modelCheckSkipped); a given pipeline does not.
  Auto,
  /// Always compare; a model that cannot run is an error.
  Require,
  /// Never compare.
  Off,
  /// Compare after every pass that changed the model and roll back one that
  /// changed the outputs (it is reported and not run again).
  EachPass,
};

/// The surface a caller reaches the library through: messages name options
/// as that surface spells them (OptimizeOptions::inputShapes is
/// `inputShapes` in C++, `--input-shapes` on the command line, `input_shapes`
/// in Python; the list of passes is listPasses(), --list-passes,
/// onnxslim.list_passes()).
enum class Surface { Cpp, CommandLine, Python };

struct OptimizeOptions {
  /// What messages call the model (its path, for the command line).
  std::string modelName = "<model>";
  /// Whose spelling of an option the messages use.
  Surface surface = Surface::Cpp;
  /// Pipeline text ("eliminate-identity-ops,fold-constants{size-limit=0}"),
  /// run once; "" runs no pass. Unset: the default pipeline for `target`,
  /// run to a fixed point (at most `maxRounds` rounds).
  std::optional<std::string> pipeline;
  unsigned maxRounds = 10; ///< PassManager::kDefaultMaxRounds
  /// "onnx" (standard ops only) or "onnxruntime" (also ONNX Runtime
  /// contrib-op fusions, which its pipeline adds and its passes need).
  std::string target = "onnx";
  /// Passes to leave out of the pipeline (each must be a registered pass).
  std::vector<std::string> skipPasses;
  /// Fusions to leave out: OnnxSlim's names (onnxslimFusionNames(): the
  /// whole pass, or only that fusion through the pass's skip option, which
  /// the pipeline text then shows) or our fuse-* pass names (the whole
  /// pass). An unknown name is an error.
  std::vector<std::string> skipFusions;
  /// Optimizations to leave out by OnnxSlim's names for them
  /// (onnxslimOptimizationNames(): "constant_folding", "graph_fusion",
  /// "dead_node_elimination", "subexpression_elimination",
  /// "weight_tying"), each the passes that do it here. An unknown name is
  /// an error.
  std::vector<std::string> skipOptimizations;
  /// Convert the model to this default-domain opset (7..24, up or down)
  /// before the pipeline (pass convert-opset, first in the pipeline); the
  /// pipeline then optimizes the converted model. A model the conversion
  /// declines (an op with no adapter or no form at that opset) is an error
  /// naming the node. Unset: the model keeps its opset (no pipeline changes it).
  std::optional<int> targetOpset;
  /// With targetOpset: convert every node that can be and leave a node the
  /// conversion declines at its own version (each named in the warnings)
  /// instead of refusing the model. The model written then holds ops its
  /// opset import does not have (not valid ONNX at the target: a runtime
  /// that registers them, as ONNX Runtime does for some, may still load
  /// it); its validation problems become warnings. Off by default.
  bool allowDecline = false;

  /// Graph surgery, before any pass. `inputs`: values that become the main
  /// graph's inputs, "NAME" or "NAME:dtype" (float32, float16, int64...):
  /// what only feeds them goes, and an output that still needs a dropped
  /// input is an error. `outputs`: values that become its outputs (what
  /// only fed the old ones goes). `dropOutputs`: outputs to remove.
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::vector<std::string> dropOutputs;
  /// Main-graph input shapes to pin before inference: "NAME:1,3,224,224"
  /// (each dim a number, a symbol name or '?').
  std::vector<std::string> inputShapes;
  /// Largest folded constant, in bytes, unless it is no larger than its
  /// inputs; unset: fold-constants' default (1 MiB).
  std::optional<uint64_t> foldSizeLimit;
  /// Default pipeline only: run shape inference and record the inferred
  /// types as value_info (false: neither).
  bool shapeInference = true;
  /// Optimize a model that fails validation (its output is not validated).
  bool allowInvalid = false;
  /// After the pipeline, convert floating-point weights and computation:
  /// "float16" (float32 -> float16; ops without a float16 form stay float32
  /// behind Casts), "bfloat16" (float32 -> bfloat16, the same rules but for
  /// float16's range; opset 13 or later, else an error naming the opset) or
  /// "float32" (float16 -> float32, exact), also spelt "fp16", "bf16" and
  /// "fp32" (the command line's --dtype); "" keeps the
  /// model's types. The pass convert-float-type runs once, then a cleanup
  /// round (dead nodes, unused initializers). The model check compares the
  /// optimized model before the conversion; float16 is compared after it
  /// too (see float16Fallback), and with ModelCheckMode::Require or
  /// EachPass a conversion out of tolerance fails.
  std::string floatType;
  /// With floatType: the main graph's inputs and outputs keep their declared
  /// types (Casts at the interface); false converts them too.
  bool keepIOTypes = true;
  /// With floatType "float16" or "bfloat16" and keepIOTypes (the
  /// tolerances below are float16's; bfloat16's are 8 times looser, see
  /// runtime/Compare.h): compare the converted model
  /// with the float32 one in the interpreter (when the model check runs:
  /// ModelCheckMode::Auto on a checkable model, Require, EachPass), with
  /// tolerances rtol 1e-2, atol 1e-3 plus 1e-2 of each output's largest
  /// magnitude; when outputs leave them, keep in float32 the nodes deciding
  /// float comparisons and the shortest prefix of the main graph's nodes
  /// that brings them back (a warning says how many). false: convert
  /// everything that has a float16 form.
  bool float16Fallback = true;

  ModelCheckMode modelCheck = ModelCheckMode::Auto;
  /// Sizes of symbolic input dims for the model check (others: tried at 32,
  /// 64, 512, then 1; a leading batch dim stays 1).
  std::map<std::string, int64_t> checkDims;
  /// Input shapes/dtypes/ranges for the check from a models.json-style file
  /// and the name of the entry in it ("" for none).
  std::string checkSpecFile;
  std::string checkSpecModel;
  /// Constant bytes up to which ModelCheckMode::Auto checks.
  uint64_t modelCheckBudget = uint64_t{256} << 20;
  /// Samples of seeded inputs the check compares (seeds 0, 1, ...).
  int checkSamples = 1;
  /// Real inputs for the check, by input name, in place of seeded ones.
  std::map<std::string, TensorPtr> checkInputs;
  /// Shapes of the check's seeded inputs, by input name (OnnxSlim's
  /// model_check_inputs "NAME:1,3,224,224"), over the spec file's.
  std::map<std::string, std::vector<int64_t>> checkInputShapes;

  /// Where pass names in `pipeline` are looked up; null: the built-in passes.
  /// Must outlive the call.
  const PassRegistry *registry = nullptr;

  /// Called as each pass starts: its name, the round, and the seconds since
  /// optimize() began (for a progress display).
  std::function<void(std::string_view pass, unsigned round, double seconds)> onPassStart;

  //===--- Instrumentation (what --print-ir-*, --debug-only print) ------===//
  /// Where IR dumps, debug lines and warnings go; null: nowhere (warnings
  /// are in the report either way).
  std::ostream *log = nullptr;
  std::vector<std::string> printIRBefore;
  std::vector<std::string> printIRAfter;
  bool printIRBeforeAll = false;
  bool printIRAfterAll = false;
  bool printIRAfterChange = false;
  bool printLargeConstants = false;
  /// Verify the IR (and, for a valid input, the ONNX spec) after every pass.
  bool verifyEach = false;
  /// Pass or pattern names whose debug lines go to `log` ("all").
  std::vector<std::string> debugOnly;
};

/// One pipeline entry's statistics and time.
struct PassReport {
  std::string pass;
  /// Counter name and value, in the order the pass first touched them.
  std::vector<std::pair<std::string, uint64_t>> counters;
  double seconds = 0;
  unsigned runs = 0;
};

/// What the model check measured.
struct CheckReport {
  size_t outputs = 0;
  double maxAbsDiff = 0;
  double maxRelDiff = 0;
  double seconds = 0;
  /// The symbolic dims the inputs had ("batch=1, seq=32"; "" if none).
  std::string dims;
  /// Rewrites the pipeline made, and how many of them are exact by
  /// construction (removing dead nodes or Identity, merging equal
  /// constants, folding constants, integer shape folding, types).
  size_t rewrites = 0;
  size_t exactRewrites = 0;
  /// Whether the check proved the model without running it: every rewrite
  /// was exact by construction (no run, seconds ~0).
  bool provedStructurally = false;
  /// Outputs compared with another precision's tolerance than float32's
  /// ("float16 for 1 output"; "" if none): each output is compared with
  /// the tolerance of the precision it is computed in (docs/API.md).
  std::string tolerances;
  /// The named symbolic dims of the first sample and their sizes, as
  /// VerifyOptions::dims takes them (`dims` says it as text, with the
  /// values of branch-picking inputs and unnamed dims).
  std::map<std::string, int64_t> dimSizes;
};

struct OptimizeReport {
  /// Success, or why nothing should be written.
  Status status;
  /// Whether the input passed validation (an invalid input is optimized
  /// only with allowInvalid, and its output is not validated), and every
  /// problem found (at most 100).
  bool inputValid = false;
  std::vector<std::string> inputProblems;
  ModelCounts before;
  ModelCounts after;
  /// The pipeline that ran, as text.
  std::string pipeline;
  unsigned rounds = 0;
  bool converged = true;
  bool changed = false;
  /// Statistics and time of every pipeline entry, in pipeline order.
  std::vector<PassReport> passes;
  /// Whether the outputs were compared, and what was found.
  bool modelChecked = false;
  CheckReport check;
  /// Why an Auto model check did not run ("" when it ran or was off).
  std::string modelCheckSkipped;
  /// With floatType "float16" or "bfloat16": whether the converted model was compared
  /// with the float32 one (float16Fallback), and how many nodes the
  /// fallback kept in float32 (0: all converted within tolerance).
  bool float16Compared = false;
  size_t float16KeptNodes = 0;
  /// "pass: reason" for every pass rolled back (ModelCheckMode::EachPass).
  std::vector<std::string> rolledBack;
  /// A rewrite the final model check found at fault and undid: the model
  /// written is the pipeline without it (at that node only; the rest of the
  /// pipeline's work is kept).
  struct UndoneRewrite {
    std::string pass;       ///< The pass that made it.
    std::string pattern;    ///< Its pattern or step (the pass's name for a whole run).
    std::string node;       ///< Its root node ("Add 'miscompile_add'").
    unsigned round = 0;     ///< The pipeline round.
    std::string difference; ///< The outputs it changed, one line each.
  };
  std::vector<UndoneRewrite> undoneRewrites;
  /// Warnings of the passes and of the input's validation.
  std::vector<std::string> warnings;
  /// The statistics and timing reports as `onnxslim --stats --timing` prints them.
  std::string statisticsText;
  std::string timingText;
  double seconds = 0;
};

/// Given a model and options, Execute: validates it, optimizes it in place
/// and validates the result, Result: the report. When status is not ok the
/// model may be half-optimized and must not be written.
OptimizeReport optimize(Model &model, const OptimizeOptions &options = {});

/// Given options and one model check input as the command line and OnnxSlim
/// write it, "NAME:FILE" (a .npy or TensorProto .pb file: real data) or
/// "NAME:d0,d1,..." (the shape of the seeded input), '=' also separating
/// NAME (a name may hold ':' then: "input:0=x.npy"; with ':' only, the last
/// one separates), Execute: records it in checkInputs or checkInputShapes,
/// Result: why not (bad syntax, unreadable file).
Status addModelCheckInput(OptimizeOptions &options, std::string_view spec);

/// Given options, Result: the error optimize() would give for them alone
/// (unknown pass or target, bad pass option, unknown name in printIR* or
/// debugOnly, malformed input shape), so that a caller can fail before
/// reading a large model.
Status checkOptions(const OptimizeOptions &options);

/// One of OnnxSlim's fusion names, and what it is here.
struct FusionName {
  /// OnnxSlim's name ("FusionConvTransposeBN").
  std::string name;
  /// Our pass doing that fusion ("fuse-conv-batchnorm").
  std::string pass;
  /// The pass option that skips only that fusion ("skip=conv-transpose");
  /// "" when the name means the whole pass.
  std::string skipOption;
  /// What the name covers here, one line.
  std::string covers;
};

/// OnnxSlim's fusion names that one of our passes does, in OnnxSlim's
/// order: the one table that OptimizeOptions::skipFusions, the command
/// line's --skip-fusion-patterns and the Python module read.
std::vector<FusionName> onnxslimFusionNames();

/// One of OnnxSlim's optimization names (its skip_optimizations) and the
/// passes that do that optimization here.
struct OptimizationName {
  std::string name;                ///< "constant_folding"
  std::vector<std::string> passes; ///< {"fold-constants"}
};

/// OnnxSlim's optimization names, in its order: the one table that
/// OptimizeOptions::skipOptimizations, the command line's
/// --skip-optimizations and the Python module read.
std::vector<OptimizationName> onnxslimOptimizationNames();

/// Given a fusion's name, ours ("fuse-gelu") or OnnxSlim's ("FusionGelu"),
/// Result: the pass doing that fusion (for a name whose pass does more, see
/// FusionName::skipOption), or "" when there is no such fusion.
std::string fusionPassName(std::string_view name);

/// The default pipeline's text for a target ("onnx", "onnxruntime"); "" for
/// a target that does not exist.
std::string defaultPipelineFor(std::string_view target = "onnx");

/// A registered pass, as `onnxslim --list-passes` prints it.
struct PassDescription {
  std::string name;
  std::string description;
};

/// Given a registry (null: the built-in passes), Result: its passes, sorted
/// by name.
std::vector<PassDescription> listPasses(const PassRegistry *registry = nullptr);

//===----------------------------------------------------------------------===//
// Running models in the interpreter
//===----------------------------------------------------------------------===//

/// A graph input or output: a tensor, a sequence of tensors or an optional.
struct RunValue {
  enum class Kind { None, Tensor, Sequence, Optional };
  Kind kind = Kind::None;
  TensorPtr tensor;                       ///< Kind::Tensor
  std::vector<TensorPtr> sequence;        ///< Kind::Sequence
  std::shared_ptr<const RunValue> optional; ///< Kind::Optional (null: empty)
  /// An empty optional or sequence: the element type it was declared with,
  /// when known (an OptionalProto file stores it as elem_type).
  std::optional<Type> elemType;

  static RunValue fromTensor(TensorPtr t) {
    RunValue v;
    v.kind = Kind::Tensor;
    v.tensor = std::move(t);
    return v;
  }
};

struct RunConfig {
  /// Inputs not given are made from this seed: floats uniform in [-1, 1),
  /// integers in [0, 9], shaped by the declared type.
  uint64_t seed = 0;
  /// Sizes of symbolic input dims (others: 1).
  std::map<std::string, int64_t> dims;
  /// Input shapes/dtypes/ranges from a models.json-style file, and the
  /// name of the entry in it ("" for none).
  std::string specFile;
  std::string specModel;
  /// Refuse inputs whose rank or fixed dims contradict the declared input
  /// shapes (element types are always checked).
  bool checkInputShapes = true;
};

/// Given a model and inputs by name (the rest seeded), Execute: runs the
/// main graph, Result: the outputs by name, in graph order, or why not.
Result<std::vector<std::pair<std::string, RunValue>>>
run(const Model &model, const std::map<std::string, RunValue> &inputs = {}, const RunConfig &config = {});

/// What runProfiled() measures besides the outputs.
struct ProfileOptions {
  /// After the run, 2 untimed warm-up runs and this many timed ones
  /// (RunReport::benchSeconds).
  int benchRuns = 0;
  /// Time per op type (RunReport::ops), over every run.
  bool opTimes = false;
  /// Time per node (RunReport::nodes), over every run.
  bool nodeTimes = false;
};

/// Time spent in one op type ("Conv", "com.microsoft.FusedConv"); control
/// flow ops include their subgraphs.
struct OpTime {
  std::string op;
  int64_t calls = 0;
  double seconds = 0;
};

/// Time spent in one node of the main graph or a subgraph.
struct NodeTime {
  std::string node;        ///< Its name ("" when unnamed).
  std::string output;      ///< Its first result's name ("" if none).
  std::string op;          ///< Its op type.
  std::string inputShapes; ///< Its inputs' shapes on the first call ("1x3x224x224, 8x3x3x3").
  int64_t calls = 0;
  double seconds = 0;
};

struct RunReport {
  /// The first run's outputs by name, in graph order.
  std::vector<std::pair<std::string, RunValue>> outputs;
  /// Seconds of each timed run (ProfileOptions::benchRuns).
  std::vector<double> benchSeconds;
  /// With opTimes: per op type, by op name.
  std::vector<OpTime> ops;
  /// With nodeTimes: per node, in the order of their first run.
  std::vector<NodeTime> nodes;
};

/// Given a model, inputs by name (the rest seeded) and what to measure,
/// Execute: runs the main graph (then the benchmark runs), Result: the
/// outputs and the times, or why not. The interpreter's threads are the
/// pool's (setThreadCount()).
Result<RunReport> runProfiled(const Model &model, const std::map<std::string, RunValue> &inputs = {},
                              const RunConfig &config = {}, const ProfileOptions &profile = {});

/// Given "SYM=N" (the command line's --dim), Execute: records N as the size
/// of symbolic dim SYM in `dims`, Result: why not (bad syntax, N not a
/// non-negative integer).
Status parseDim(std::string_view flag, std::map<std::string, int64_t> &dims);

/// Given a models.json-style file and the name of an entry, Result: why
/// they cannot give inputs (the file does not read, an input spec is
/// malformed); RunConfig::specFile and VerifyOptions::specFile read the
/// same, so a caller can fail before reading a large model.
Status checkInputSpecs(const std::string &specFile, const std::string &specModel);

//===----------------------------------------------------------------------===//
// Data files: the values models take and give
//===----------------------------------------------------------------------===//

/// Given a path, Execute: reads a tensor: NumPy's .npy format for a path
/// ending in ".npy", else a serialized TensorProto, Result: the tensor, or
/// why not (naming the file).
Result<TensorPtr> readTensorFile(const std::string &path);

/// Given a model, a data file and the main-graph input it feeds ("": the
/// input the file's own name field names), Execute: reads the file as the
/// kind of value that input declares (TensorProto, SequenceProto or
/// OptionalProto, as the ONNX test data stores them), Result: the input's
/// name and the value, or why not (naming the file and the input).
Result<std::pair<std::string, RunValue>> readInputFile(const Model &model, const std::string &path,
                                                       const std::string &input = "");

/// Given a value and the name to store in it, Result: the bytes of the
/// TensorProto, SequenceProto or OptionalProto holding it (what `onnxslim
/// run` writes), or why not (a value missing, an optional of an optional).
Result<std::string> serializeValue(const RunValue &value, const std::string &name);

/// Given the names of values written to one directory, in order, Result:
/// each one's file name, as `onnxslim run --output-dir` and the ONNX
/// Runtime oracle name them: bytes outside [A-Za-z0-9._-] become '_', and
/// names that would then share a file get their FNV-1a hash before ".pb",
/// except one that needed no change (a_b, a/b -> a_b.pb, a_b.3a8e75c1.pb).
std::vector<std::string> valueFileNames(const std::vector<std::string> &names);

/// Given a path and bytes, Execute: writes them atomically, as save() does
/// (a temporary file renamed over `path`), Result: why not.
Status writeFile(const std::string &path, std::string_view bytes);

struct VerifyOptions {
  /// Samples of seeded inputs (seeds seed, seed+1, ...).
  int samples = 1;
  uint64_t seed = 0;
  std::map<std::string, int64_t> dims;
  std::string specFile; ///< as RunConfig::specFile
  std::string specModel;
  /// What messages call the two models.
  std::string referenceName = "the reference";
  std::string candidateName = "the candidate";
  /// An element matches when |candidate - reference| <= atol + rtol *
  /// |reference| (+ a share of the output's scale): by default with the
  /// tolerance of the precision the output is computed in, in either model
  /// (float32: rtol 1e-4, atol 1e-5; float16: rtol 1e-2, atol 1e-3 + 1e-2
  /// of the scale; integers and bool exactly; the table is in docs/API.md);
  /// set, these replace rtol and atol (and the share of the scale) for
  /// every floating output.
  std::optional<double> rtol;
  std::optional<double> atol;
  /// Inputs to use instead of seeded ones, by name.
  std::map<std::string, RunValue> inputs;
  /// Shapes of seeded inputs, by name (`NAME:1,3,48,320`), over the specs'.
  std::map<std::string, std::vector<int64_t>> inputShapes;
};

/// One output's comparison over every sample.
struct OutputComparison {
  std::string name;
  /// The precision whose tolerance applied ("float", "float16"...; "" for an
  /// output compared exactly: integers, bool, strings).
  std::string precision;
  double maxAbsDiff = 0;
  double maxRelDiff = 0;
  /// Elements out of tolerance (or 1 for a shape/type mismatch), and the first.
  int64_t mismatches = 0;
  std::string firstMismatch;
};

struct VerifyReport {
  std::vector<OutputComparison> outputs;
  /// What the inputs were made with, per sample, as the model check says
  /// it ("batch=1; x[2]=32 | ..."; "" when nothing was chosen): dims the
  /// caller left free are sized as the optimizer's model check sizes them
  /// (tried at 32, 64 and 512, then searched until the reference runs).
  std::string inputs;
  /// The first sample's named symbolic dims and their sizes.
  std::map<std::string, int64_t> dims;
  /// Samples compared (at least VerifyOptions::samples: one per input
  /// decision the search makes, as the model check does).
  size_t samples = 0;
  bool equivalent() const {
    for (const OutputComparison &o : outputs)
      if (o.mismatches)
        return false;
    return true;
  }
};

/// Given a reference and a candidate with the same interface, Execute: runs
/// both on the same inputs, Result: per-output differences, or why they
/// could not be compared (interfaces differ, a model does not run).
Result<VerifyReport> verify(const Model &reference, const Model &candidate, const VerifyOptions &options = {});

} // namespace onnxslim
