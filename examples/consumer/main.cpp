//===- examples/consumer/main.cpp - onnxslim as a library -----------------===//
//
//   consumer IN OUT
//
// Loads IN, optimizes it with the default options (the model `onnxslim IN
// OUT` writes) and saves it to OUT; prints "nodes: BEFORE -> AFTER". On
// error prints the message to stderr and exits 1.
//
//===----------------------------------------------------------------------===//
#include <onnxslim/onnxslim.h>

#include <iostream>
#include <memory>

int main(int argc, char **argv) {
  if (argc != 3) {
    std::cerr << "usage: consumer IN OUT\n";
    return 1;
  }
  onnxslim::Result<std::unique_ptr<onnxslim::Model>> model = onnxslim::load(argv[1]);
  if (!model) {
    std::cerr << model.error() << "\n";
    return 1;
  }
  onnxslim::OptimizeReport report = onnxslim::optimize(**model);
  if (!report.status) {
    std::cerr << report.status.message() << "\n";
    return 1;
  }
  if (onnxslim::Status saved = onnxslim::save(**model, argv[2]); !saved) {
    std::cerr << saved.message() << "\n";
    return 1;
  }
  std::cout << "nodes: " << report.before.nodes << " -> " << report.after.nodes << "\n";
  return 0;
}
