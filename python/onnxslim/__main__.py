"""python3 -m onnxslim IN OUT [options]: optimize IN into OUT with slim().

The options are the command line's names for slim()'s keywords (the
`onnxslim` executable takes the same ones and more: `onnxslim --help`).
"""
import argparse
import sys

from . import OnnxSlimError, slim


def _parser():
    p = argparse.ArgumentParser(prog="python3 -m onnxslim",
                                description="Optimize an ONNX model (onnxslim's C++ library through slim()).")
    p.add_argument("input", help="input model (.onnx)")
    p.add_argument("output", help="output model (.onnx), written atomically")
    check = p.add_mutually_exclusive_group()
    check.add_argument("--model-check", dest="model_check", action="store_const", const=True, default=None,
                       help="compare outputs before and after (an error if it cannot run)")
    check.add_argument("--no-model-check", dest="model_check", action="store_const", const=False,
                       help="do not compare outputs")
    p.add_argument("--input-shapes", nargs="+", metavar="NAME:d0,d1,...", help="fix input shapes")
    p.add_argument("--inputs", nargs="+", metavar="NAME[:dtype]", help="values that become the model's inputs")
    p.add_argument("--outputs", nargs="+", metavar="NAME[:dtype]", help="values that become the model's outputs")
    p.add_argument("--no-shape-infer", action="store_true", help="no shape inference")
    p.add_argument("--no-constant-folding", action="store_true", help="skip fold-constants")
    p.add_argument("--skip-fusion-patterns", nargs="+", metavar="NAME", help="fusions to skip (FUSION_PATTERNS)")
    p.add_argument("--dtype", choices=["fp16", "fp32", "float16", "float32"],
                   help="convert floating-point weights and computation after optimizing")
    p.add_argument("--keep-io-types", choices=["true", "false"], default=None,
                   help="with --dtype: keep the inputs' and outputs' types (default false, as OnnxSlim)")
    p.add_argument("--save-as-external-data", action="store_true", help="tensors of 1 KiB and more to OUT.data")
    p.add_argument("--size-threshold", "--fold-size-limit", dest="fold_size_limit", type=int, metavar="BYTES",
                   help="largest folded constant in bytes")
    p.add_argument("--target", choices=["onnx", "onnxruntime"], default="onnx")
    p.add_argument("--dim", action="append", default=[], metavar="SYM=N",
                   help="size of a symbolic input dim for the model check (repeatable)")
    p.add_argument("-q", "--quiet", action="store_true", help="no summary")
    return p


def main(argv=None):
    args = _parser().parse_args(argv)
    dims = {}
    for d in args.dim:
        sep = max(d.rfind("="), d.rfind(":"))
        if sep <= 0 or not d[sep + 1:].isdigit():
            print(f"python3 -m onnxslim: error: --dim {d}: expected SYM=N", file=sys.stderr)
            return 2
        dims[d[:sep]] = int(d[sep + 1:])
    try:
        slim(args.input, args.output, model_check=args.model_check, input_shapes=args.input_shapes,
             inputs=args.inputs, outputs=args.outputs, no_shape_infer=args.no_shape_infer,
             no_constant_folding=args.no_constant_folding, skip_fusion_patterns=args.skip_fusion_patterns,
             dtype=args.dtype, keep_io_types=None if args.keep_io_types is None else args.keep_io_types == "true",
             save_as_external_data=args.save_as_external_data, fold_size_limit=args.fold_size_limit,
             target=args.target, dims=dims or None, verbose=not args.quiet)
    except (OnnxSlimError, ValueError, TypeError) as e:
        print(f"python3 -m onnxslim: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
