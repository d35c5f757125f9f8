//===- onnxslim/passes.h - Writing passes of your own -----------*- C++ -*-===//
//
// For compilers that extend onnxslim: a pass is a class deriving from Pass
// (a whole-model transformation) or a set of Patterns run by a
// PatternRewritePass; register it in a PassRegistry (start from
// PassRegistry::withBuiltinPasses() to keep the built-in ones) and name it in
// OptimizeOptions::pipeline, or drive a PassManager yourself.
//
//   struct CountConvs : onnxslim::Pass {
//     std::string_view name() const override { return "count-convs"; }
//     std::string_view description() const override { return "Counts Conv nodes"; }
//     bool run(onnxslim::Model &m, onnxslim::PassContext &ctx) override { ...; return false; }
//   };
//   onnxslim::PassRegistry registry = onnxslim::PassRegistry::withBuiltinPasses();
//   registry.add<CountConvs>();
//   options.registry = &registry;
//   options.pipeline = "count-convs,eliminate-dead-nodes";
//
// docs/ARCHITECTURE.md says how a pass is written and tested.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "onnxslim.h"

#include "ir/IR.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"
#include "transforms/GreedyPatternRewriteDriver.h"
#include "transforms/Pass.h"
#include "transforms/PassManager.h"
#include "transforms/PassRegistry.h"
#include "transforms/PatternMatch.h"
