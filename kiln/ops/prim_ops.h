#pragma once
// What the prim:: operators expose to the rest of kiln: the exception a
// TorchScript `raise` throws, where `print` writes, and grad mode.
#include <functional>
#include <string>

#include "kiln/util/error.h"

namespace kiln {

// Raised by prim::RaiseException (`raise ValueError("...")` in TorchScript).
// what() is "<python class>: <message>", as 1.13 ends its error text.
class ScriptException : public Error {
 public:
  ScriptException(std::string python_class, std::string message);
  // The qualified Python class the program named ("builtins.ValueError").
  const std::string& pythonClass() const { return python_class_; }
  const std::string& message() const { return message_; }

 private:
  std::string python_class_;
  std::string message_;
};

// prim::Print writes whole lines through this handler (stdout by default;
// the Python package sends them to sys.stdout).
using PrintHandler = std::function<void(const std::string& text)>;
void setPrintHandler(PrintHandler handler);

// Grad mode, per thread as torch's: what aten::is_grad_enabled reads and
// aten::set_grad_enabled (`with torch.no_grad():`) writes. Scripted modules
// of torch 1.13 decide on it (TransformerEncoder's inference fast path).
bool isGradEnabled();
void setGradEnabled(bool enabled);

}  // namespace kiln
