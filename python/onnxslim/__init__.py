"""onnxslim: an optimizing compiler for ONNX models, from Python.

    import onnxslim
    onnxslim.slim("in.onnx", "out.onnx")        # path in, path out (returns None)
    optimized = onnxslim.slim(model_proto)       # onnx.ModelProto in, ModelProto out

slim() takes the arguments of OnnxSlim's slim() that this compiler has a
meaning for (model_check, input_shapes, no_shape_infer, no_constant_folding,
skip_fusion_patterns, save_as_external_data) and a few of its own (target,
passes, fold_size_limit, allow_invalid, dims). The work is done by the C++
library (the same function the `onnxslim` command line calls, so the same
input gives byte-identical output) with the GIL released.

A path goes straight to the C++ loader (models past protobuf's 2 GB limit
work that way); a ModelProto (any object with SerializeToString) or bytes
are passed as bytes. The module does not need the `onnx` package: without it
a model given by path or bytes comes back as bytes.

Errors raise OnnxSlimError (a RuntimeError) whose message names the file and,
where there is one, the node and op; bad arguments raise ValueError or
TypeError before the model is read.
"""

import os
import warnings

from ._onnxslim import OnnxSlimError
from ._onnxslim import default_pipeline as _default_pipeline
from ._onnxslim import list_passes as _list_passes
from ._onnxslim import onnxslim_fusion_names as _onnxslim_fusion_names
from ._onnxslim import slim_model as _slim_model
from ._onnxslim import onnxslim_optimization_names as _onnxslim_optimization_names
from ._onnxslim import version as _version

OnnxSlimError.__module__ = __name__

__version__ = _version()

__all__ = ["slim", "optimize", "OnnxSlimError", "OnnxSlimWarning", "version", "default_pipeline",
           "FUSION_PATTERNS", "FUSION_NAMES", "OPTIMIZATION_NAMES", "list_passes", "__version__"]


class OnnxSlimWarning(UserWarning):
    """A pass's warning (a node it could not fold, an input problem tolerated)."""


def version():
    """The library's version, "MAJOR.MINOR.PATCH" (the command line's --version)."""
    return _version()


def default_pipeline(target="onnx"):
    """The default pipeline's text for a target ("onnx" or "onnxruntime")."""
    return _default_pipeline(target)


#: OnnxSlim's fusion pattern names that one of our passes does, as the C++
#: library's one table has them (the command line's --skip-fusion-patterns
#: reads it too): dicts with "name" (OnnxSlim's), "pass" (ours), "skip_option"
#: (the pass option that skips only that fusion, "" for the whole pass) and
#: "covers" (what it fuses here). OnnxSlim's patterns with no counterpart
#: here are not listed and are refused, as are unknown names.
FUSION_NAMES = _onnxslim_fusion_names()
# OnnxSlim's optimization names (skip_optimizations) -> the passes each is here.
OPTIMIZATION_NAMES = _onnxslim_optimization_names()


def list_passes():
    """The built-in passes as (name, description) pairs, sorted by name (the
    names passes= and the pipeline text take)."""
    return _list_passes()

#: Every name skip_fusion_patterns accepts, and what it skips, in pipeline
#: syntax: our fuse-* passes skip themselves; OnnxSlim's names skip their
#: pass, or only their part of it ("fuse-conv-batchnorm{skip=conv-transpose}"
#: for FusionConvTransposeBN: Conv + BatchNormalization is still fused).
FUSION_PATTERNS = dict({name: name for name, _ in _list_passes() if name.startswith("fuse-")},
                       **{f["name"]: f["pass"] + ("{" + f["skip_option"] + "}" if f["skip_option"] else "")
                          for f in FUSION_NAMES})

# OnnxSlim's arguments this compiler has no meaning for yet.
_NOT_IMPLEMENTED = {
    "inspect": "inspect is not supported by slim() here (OnnxSlim's slim() ignores it for one model): "
               "`onnxslim IN --inspect` describes a model, and optimize(model, passes='')[1] has its counts",
    "dump_to_disk": "dump_to_disk is not supported (OnnxSlim writes a CSV per model in its inspect mode only): "
                    "`onnxslim dump MODEL` prints every node",
}


def _as_list(value, name):
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    try:
        items = list(value)
    except TypeError:
        raise TypeError(f"{name}: expected a string or a list of strings, not {type(value).__name__}") from None
    for item in items:
        if not isinstance(item, str):
            raise TypeError(f"{name}: expected strings, not {type(item).__name__}")
    return items


def _skip_fusions(skip_fusion_patterns):
    """The names to skip, checked against FUSION_PATTERNS (the library resolves them)."""
    skip = []
    for name in _as_list(skip_fusion_patterns, "skip_fusion_patterns"):
        if name not in FUSION_PATTERNS:
            raise ValueError(f"skip_fusion_patterns: unknown pattern '{name}' (known: "
                             f"{', '.join(sorted(FUSION_PATTERNS))})")
        if name not in skip:
            skip.append(name)
    return skip


def _model_check_mode(model_check):
    if model_check is None:
        return "auto"  # checked when cheap and possible; the report says why not otherwise
    if model_check is True:
        return "require"
    if model_check is False:
        return "off"
    if isinstance(model_check, str) and model_check in ("auto", "require", "off", "each-pass"):
        return model_check
    raise ValueError(f"model_check: expected None, True, False or one of 'auto', 'require', 'off', 'each-pass', "
                     f"not {model_check!r}")


def _source(model):
    """(what the extension reads: a str path or bytes, the name errors use, a parser for the result or None)."""
    if isinstance(model, (str, os.PathLike)):
        path = os.fspath(model)
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        return path, path, None
    if isinstance(model, (bytes, bytearray, memoryview)):
        return bytes(model), "<bytes>", None
    serialize = getattr(model, "SerializeToString", None)
    if callable(serialize):
        # A ModelProto: the result is parsed back into the same class, so that
        # no `import onnx` is needed here.
        cls = type(model)

        def parse(data):
            result = cls()
            result.ParseFromString(data)
            return result

        # Messages name it by its graph's name, as a path names a file.
        graph_name = getattr(getattr(model, "graph", None), "name", "")
        return serialize(), f"model '{graph_name}'" if graph_name else f"<{cls.__name__}>", parse
    if isinstance(model, (list, tuple)):
        raise TypeError("model: a list of models is OnnxSlim's inspect mode, which slim() does not have here: "
                        "`onnxslim IN --inspect` describes a model (or optimize(model, passes='') reports its counts)")
    raise TypeError(f"model: expected a path, an onnx.ModelProto (anything with SerializeToString) or bytes, "
                    f"not {type(model).__name__}")


def _model_proto_parser():
    try:
        import onnx  # noqa: only to return what onnx users expect
    except ImportError:
        return None
    return onnx.ModelProto.FromString


def optimize(model, output_model=None, *, model_check=None, input_shapes=None, inputs=None, outputs=None,
             no_shape_infer=False, no_constant_folding=False, skip_fusion_patterns=None, dtype=None,
             keep_io_types=None, save_as_external_data=False, target="onnx", passes=None, fold_size_limit=None,
             allow_invalid=False, dims=None, verbose=False, skip_optimizations=None, size_threshold=None,
             model_check_inputs=None, target_opset=None, allow_decline=False, **onnxslim_options):
    """slim() that also returns the report: (what slim() returns, report dict).

    The report holds the node/initializer/constant-byte counts and op counts
    before and after, the pipeline, per-pass statistics and time, the model
    check's figures (or why it did not run), warnings and seconds.
    """
    if dtype not in (None, "fp16", "bf16", "fp32", "float16", "bfloat16", "float32"):
        raise ValueError(f"dtype: expected 'fp16', 'bf16' or 'fp32', not {dtype!r}")
    float_type = {"fp16": "float16", "bf16": "bfloat16", "fp32": "float32"}.get(dtype, dtype or "")
    for name, value in onnxslim_options.items():
        if name in _NOT_IMPLEMENTED:
            if value not in (None, False):
                raise NotImplementedError(_NOT_IMPLEMENTED[name])
        else:
            raise TypeError(f"slim() got an unexpected keyword argument '{name}'")
    if output_model is not None:
        output_model = os.fspath(output_model)
        if isinstance(output_model, bytes):
            output_model = os.fsdecode(output_model)
    elif save_as_external_data:
        raise ValueError("save_as_external_data needs output_model: external data is written beside a file")
    if dims is not None and not isinstance(dims, dict):
        raise TypeError("dims: expected a dict such as {'batch': 4}")
    if size_threshold is not None:
        # OnnxSlim's meaning: results larger than this many bytes are not
        # folded, and 0 is no limit.
        if fold_size_limit is not None:
            raise ValueError("size_threshold and fold_size_limit both bound folding: give one")
        if not isinstance(size_threshold, int) or size_threshold < 0:
            raise ValueError(f"size_threshold: expected a number of bytes >= 0, not {size_threshold!r}")
        fold_size_limit = size_threshold if size_threshold > 0 else 2**62

    source, name, parse = _source(model)
    try:
        result, report = _slim_model(
            source,
            output=output_model,
            model_name=name,
            pipeline=passes,
            target=target,
            skip_passes=["fold-constants"] if no_constant_folding else [],
            skip_fusions=_skip_fusions(skip_fusion_patterns),
            skip_optimizations=_as_list(skip_optimizations, "skip_optimizations"),
            check_inputs=_as_list(model_check_inputs, "model_check_inputs"),
            input_shapes=_as_list(input_shapes, "input_shapes"),
            fold_size_limit=fold_size_limit,
            shape_inference=not no_shape_infer,
            allow_invalid=allow_invalid,
            target_opset=target_opset,
            allow_decline=allow_decline,
            model_check=_model_check_mode(model_check),
            check_dims=dict(dims or {}),
            external_data=save_as_external_data,
            inputs=_as_list(inputs, "inputs"),
            outputs=_as_list(outputs, "outputs"),
            float_type=float_type,
            # Unset: OnnxSlim's meaning, the inputs and outputs are converted too.
            keep_io_types=bool(keep_io_types) if keep_io_types is not None else not dtype,
        )
    except OnnxSlimError as error:
        raise _model_check_error(error) from None
    for warning in _check_warnings(report) + report["warnings"]:
        warnings.warn(warning, OnnxSlimWarning, stacklevel=3)
    if verbose:
        _print_summary(name, output_model, report)
    if result is not None:
        parse = parse or _model_proto_parser()
        if parse is not None:
            result = parse(result)
    return result, report


def _model_check_error(error):
    """The error to raise for an OnnxSlimError from the library: a failed
    model check says how OnnxSlim reports one (it returns None)."""
    if not str(error).startswith("model check"):
        return error
    return OnnxSlimError(f"{error}\n(OnnxSlim 0.1.96 prints a mismatch and returns None; onnxslim raises. "
                         "model_check=False skips the check.)")


def _check_warnings(report):
    """What the model check repaired, as warning texts: each pass rolled
    back and each rewrite undone because it changed the outputs."""
    texts = [f"model check: rolled back {entry}" for entry in report["rolled_back"]]
    for u in report["undone_rewrites"]:
        texts.append(f"model check: undid {u['pattern']} at {u['node']} (pass '{u['pass']}', round {u['round']}), "
                     f"which changed the outputs; the rest of the pipeline's work is kept:\n{u['difference']}")
    return texts


def slim(model, output_model=None, *, model_check=None, input_shapes=None, inputs=None, outputs=None,
         no_shape_infer=False, no_constant_folding=False, skip_fusion_patterns=None, dtype=None,
         keep_io_types=None, save_as_external_data=False, target="onnx", passes=None, fold_size_limit=None,
         allow_invalid=False, dims=None, verbose=False, skip_optimizations=None, size_threshold=None,
         model_check_inputs=None, target_opset=None, allow_decline=False, **onnxslim_options):
    """Optimize an ONNX model (OnnxSlim's slim(), done by onnxslim's C++ library).

    model: a path (str or os.PathLike), an onnx.ModelProto (any object with
        SerializeToString) or the model's bytes.
    output_model: where to write the optimized model (atomically). Given:
        returns None. Not given: returns the model, as the class of the
        ModelProto given, else an onnx.ModelProto when `onnx` is importable,
        else bytes.
    model_check: None (default): outputs are compared in onnxslim's
        interpreter when the model is small enough and every op has a
        deterministic kernel; True: always (an error if it cannot run);
        False: never. A mismatch raises OnnxSlimError.
    input_shapes: "NAME:1,3,224,224" or a list of them (dims: numbers,
        symbol names or '?').
    no_shape_infer: no shape inference and no inferred value_info written.
    no_constant_folding: skip fold-constants.
    skip_fusion_patterns: names from FUSION_PATTERNS (our pass names, such
        as "fuse-gelu", or OnnxSlim's, such as "FusionGelu", each skipping
        only what it names: FusionConvTransposeBN leaves Conv +
        BatchNormalization fused).
    save_as_external_data: tensors of 1 KiB and more go to <output>.data.
    target: "onnx" or "onnxruntime" (also ONNX Runtime contrib-op fusions).
    passes: a pipeline run once instead of the default one ("" runs none).
    fold_size_limit: largest folded constant in bytes (default 1 MiB; 0:
        none that grows).
    size_threshold: OnnxSlim's name for it: the same, but 0 means no limit.
    skip_optimizations: OnnxSlim's names of optimizations to leave out
        (OPTIMIZATION_NAMES: constant_folding, graph_fusion,
        dead_node_elimination, subexpression_elimination, weight_tying).
    allow_invalid: optimize a model that fails validation.
    target_opset: first convert the model to this default-domain opset
        (7..24, up or down), then optimize; an op that cannot be converted
        is an error naming the node.
    allow_decline: with target_opset, leave such nodes at their own version
        (a warning names each) instead: the result is then not valid ONNX
        at that opset.
    dims: sizes of symbolic input dims for the model check ({"batch": 4}).
    model_check_inputs: inputs for the model check, "NAME:FILE.npy" (or
        .pb: real data) or "NAME:d0,d1,..." (the shape of a seeded input);
        given, the check runs.
    verbose: print a before/after summary to stderr.
    inputs, outputs: graph surgery: the values ("NAME" or "NAME:dtype", or a
        list of them) that become the model's inputs / outputs.
    dtype: "fp16" ("float16") converts float32 weights and computation to
        float16 after optimizing, the model's inputs and outputs too, as
        OnnxSlim does; "fp32" ("float32") back, exactly. keep_io_types=True
        keeps float32 inputs/outputs (Casts at the interface; the float16
        fallback then keeps the first nodes in float32 where accuracy needs
        it, as the command line's --dtype does by default). "bf16"
        ("bfloat16") converts to bfloat16 the same way (opset 13 or later,
        else OnnxSlimError naming the opset; with keep_io_types=True its
        fallback uses bfloat16's tolerance, 8 times float16's).
    Differences from OnnxSlim 0.1.96 (docs/OnnxSlim.md has every keyword):
      - model_check defaults to None (checked when cheap), and a mismatch
        the check cannot undo raises OnnxSlimError (OnnxSlim: default False,
        a mismatch prints and returns None);
      - another dtype than fp16/bf16/fp32 (float16/bfloat16/float32) is an error (ignored
        there); dtype="fp32" never removes a Cast to an integer type;
      - inputs/outputs with a dtype other than the value's own is an error
        (OnnxSlim relabels it without a Cast);
      - unknown skip_optimizations / skip_fusion_patterns names are errors
        (ignored there); OnnxSlim's fusion names with no counterpart here
        are unknown;
      - size_threshold also keeps generators (Expand, Tile, ConstantOfShape,
        Range) that would stay in the model within 1 KiB of their inputs;
      - a list of models (OnnxSlim's inspect mode) is a TypeError; inspect
        and dump_to_disk raise NotImplementedError.

    Raises OnnxSlimError when the model cannot be read, optimized, checked
    or written (the message names the file, node and op).
    """
    result, _ = optimize(model, output_model, model_check=model_check, input_shapes=input_shapes, inputs=inputs,
                         dtype=dtype, keep_io_types=keep_io_types,
                         outputs=outputs, no_shape_infer=no_shape_infer, no_constant_folding=no_constant_folding,
                         skip_fusion_patterns=skip_fusion_patterns, save_as_external_data=save_as_external_data,
                         target=target, passes=passes, fold_size_limit=fold_size_limit, allow_invalid=allow_invalid,
                         dims=dims, verbose=verbose, skip_optimizations=skip_optimizations,
                         size_threshold=size_threshold, model_check_inputs=model_check_inputs,
                         target_opset=target_opset, allow_decline=allow_decline, **onnxslim_options)
    return result


def _print_summary(name, output_model, report):
    import sys

    before, after = report["before"], report["after"]
    print(f"onnxslim: {name} -> {output_model or '<returned>'}: nodes {before['nodes']} -> {after['nodes']}, "
          f"initializers {before['initializers']} -> {after['initializers']}, constant bytes "
          f"{before['constant_bytes']} -> {after['constant_bytes']} ({report['seconds']:.2f} s)", file=sys.stderr)
    if report["model_checked"]:
        check = report["check"]
        print(f"model check: {check['outputs']} output(s) match, max abs diff {check['max_abs_diff']:.3g}, "
              f"max rel diff {check['max_rel_diff']:.3g}", file=sys.stderr)
    elif report["model_check_skipped"]:
        print(f"model check: skipped: {report['model_check_skipped']}", file=sys.stderr)
