// TorchScript's string operators with PyTorch 1.13's schemas and semantics.
// 1.13 works on bytes with the C library's ASCII character classes, not on
// Unicode code points (len("é") is 2, "é".upper() leaves it alone), and its
// methods differ from Python's in places (zfill ignores a sign, split(None)
// ignores max, isidentifier rejects '_'); kiln gives the same results.
// Where 1.13 never returns (count or replace of an empty substring without a
// limit), kiln returns Python's answer.
#include <algorithm>
#include <bitset>
#include <cmath>
#include <iomanip>
#include <sstream>

#include "kiln/core/op_registration.h"
#include "kiln/ir/graph.h"
#include "kiln/ops/sequence_util.h"
#include "kiln/ops/shape_rules.h"

namespace kiln {
namespace {

// The "C" locale's character classes (1.13 calls ::isalpha and friends).
bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isUpper(char c) { return c >= 'A' && c <= 'Z'; }
bool isLower(char c) { return c >= 'a' && c <= 'z'; }
bool isAlpha(char c) { return isUpper(c) || isLower(c); }
bool isAlnum(char c) { return isAlpha(c) || isDigit(c); }
bool isSpace(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }
bool isPunct(char c) { return c > ' ' && c < 0x7f && !isAlnum(c); }
char toUpper(char c) { return isLower(c) ? static_cast<char>(c - 'a' + 'A') : c; }
char toLower(char c) { return isUpper(c) ? static_cast<char>(c - 'A' + 'a') : c; }
char swapCase(char c) { return isUpper(c) ? toLower(c) : toUpper(c); }

// The bytes 1.13 splits lines and words at: its delimiter literals, with
// "\x85", "\u2028" and "\u2029" taken byte by byte (so also the UTF-8 bytes
// E2 80 A8 A9).
constexpr std::string_view kLineBreaks = "\n\r\v\f\x1c\x1d\x1e\x85\xe2\x80\xa8\xa9";
constexpr std::string_view kWhitespace = " \t\n\r\v\f\x1c\x1d\x1e\x85\xe2\x80\xa8\xa9";

template <char (*Map)(char)>
std::string mapChars(const std::string& self) {
  std::string out = self;
  std::transform(out.begin(), out.end(), out.begin(), Map);
  return out;
}

// isdigit() and friends: non-empty and every byte in the class.
template <bool (*Class)(char)>
bool allChars(const std::string& self) {
  return !self.empty() && std::all_of(self.begin(), self.end(), Class);
}

// isupper() / islower(): at least one letter, every letter in the case.
template <bool (*Case)(char)>
bool casedAs(const std::string& self) {
  bool found_alpha = false;
  for (char c : self) {
    if (!isAlpha(c)) continue;
    if (!Case(c)) return false;
    found_alpha = true;
  }
  return found_alpha;
}

std::string capitalize(const std::string& self) {
  std::string out = mapChars<toLower>(self);
  if (!out.empty()) out[0] = toUpper(self[0]);
  return out;
}

std::string title(const std::string& self) {
  std::string out = self;
  bool prev_is_alpha = false;
  for (char& c : out) {
    bool alpha = isAlpha(c);
    c = prev_is_alpha ? toLower(c) : toUpper(c);
    prev_is_alpha = alpha;
  }
  return out;
}

bool isTitle(const std::string& self) {
  bool result = false;
  bool prev_is_alpha = false;
  for (char c : self) {
    if (prev_is_alpha ? isUpper(c) : isLower(c)) return false;
    result = result || (!prev_is_alpha && isAlpha(c));
    prev_is_alpha = isAlpha(c);
  }
  return result;
}

// Python 2's rule, as 1.13 has it: letters and digits, not starting with a digit.
bool isIdentifier(const std::string& self) {
  return !self.empty() && !isDigit(self[0]) && std::all_of(self.begin(), self.end(), isAlnum);
}

bool isPrintable(const std::string& self) {
  return std::all_of(self.begin(), self.end(), [](char c) { return isAlnum(c) || isPunct(c) || c == ' '; });
}

std::string strip(const std::string& self, const std::string& chars, bool left, bool right) {
  size_t begin = left ? self.find_first_not_of(chars) : 0;
  if (begin == std::string::npos) return "";
  size_t last = right ? self.find_last_not_of(chars) : self.size() - 1;
  if (last == std::string::npos) return "";
  return self.substr(begin, last + 1 - begin);
}

void checkFillChar(const std::string& fillchar) {
  KILN_CHECK(fillchar.size() == 1, "TypeError: The fill character must be exactly one character long");
}

std::string repeated(const std::string& fill, int64_t n) {
  std::string out;
  for (int64_t i = 0; i < n; ++i) out += fill;
  return out;
}

// 1.13 puts the odd padding character on the left when the width is odd.
std::string center(const std::string& self, int64_t width, const std::string& fillchar) {
  checkFillChar(fillchar);
  int64_t size = static_cast<int64_t>(self.size());
  if (width <= size) return self;
  int64_t padding = width - size;
  int64_t left = padding / 2, right = (padding + 1) / 2;
  if (width % 2) std::swap(left, right);
  return repeated(fillchar, left) + self + repeated(fillchar, right);
}

std::string justify(const std::string& self, int64_t width, const std::string& fillchar, bool left) {
  checkFillChar(fillchar);
  std::string padding = repeated(fillchar, width - static_cast<int64_t>(self.size()));
  return left ? self + padding : padding + self;
}

std::string zfill(const std::string& self, int64_t width) {
  return repeated("0", width - static_cast<int64_t>(self.size())) + self;
}

std::string expandTabs(const std::string& self, int64_t tabsize) {
  std::string out;
  for (char c : self) {
    if (c != '\t') {
      out += c;
    } else if (tabsize > 0) {
      do {
        out += ' ';
      } while (static_cast<int64_t>(out.size()) % tabsize);
    }
  }
  return out;
}

// The negative-index rules of find/count/startswith: start counts from the
// end, end = -1 means the whole string.
void adjustBounds(int64_t size, int64_t& start, int64_t& end) {
  if (start < 0) start = std::max<int64_t>(0, size + start);
  if (end < 0) end = std::max<int64_t>(0, size + end + 1);
}

// string.substr(start, end - start) as 1.13 calls it: a start past the end is
// an error, an end before the start means "to the end".
std::string window(const std::string& self, int64_t start, int64_t end, const char* op) {
  KILN_CHECK_INDEX(start <= static_cast<int64_t>(self.size()), op, ": start ", start,
                   " is past the end of a string of length ", self.size());
  return self.substr(static_cast<size_t>(start), end >= start ? static_cast<size_t>(end - start) : std::string::npos);
}

int64_t findImpl(const std::string& self, const std::string& substr, int64_t start, int64_t end, bool reverse,
                 const char* op) {
  adjustBounds(static_cast<int64_t>(self.size()), start, end);
  std::string part = end > start ? window(self, start, end, op) : "";
  if (part.size() < substr.size()) return -1;
  size_t pos = reverse ? part.rfind(substr) : part.find(substr);
  return pos == std::string::npos ? -1 : static_cast<int64_t>(pos) + start;
}

int64_t indexImpl(const std::string& self, const std::string& substr, int64_t start, int64_t end, bool reverse,
                  const char* op) {
  int64_t pos = findImpl(self, substr, start, end, reverse, op);
  KILN_CHECK(pos >= 0, "ValueError: substring not found");
  return pos;
}

int64_t count(const std::string& self, const std::string& substr, int64_t start, int64_t end) {
  int64_t size = static_cast<int64_t>(self.size());
  if (start > size) return 0;
  adjustBounds(size, start, end);
  if (substr.empty()) return end < start ? 0 : std::min(end, size) - start + 1;
  int64_t occurrences = 0;
  for (size_t pos = self.find(substr, static_cast<size_t>(start));
       pos != std::string::npos && static_cast<int64_t>(pos) < end; pos = self.find(substr, pos + substr.size())) {
    ++occurrences;
  }
  return occurrences;
}

bool affixMatch(const std::string& self, const std::string& affix, int64_t start, int64_t end, bool prefix,
                const char* op) {
  adjustBounds(static_cast<int64_t>(self.size()), start, end);
  std::string part = window(self, start, end, op);
  if (part.size() < affix.size()) return false;
  return part.compare(prefix ? 0 : part.size() - affix.size(), affix.size(), affix) == 0;
}

std::string replace(std::string self, const std::string& old, const std::string& replacement, int64_t max) {
  if (old.empty() && max < 0) {
    std::string out = replacement;
    for (char c : self) out += std::string(1, c) + replacement;
    return out;
  }
  int64_t occurrences = 0;
  for (size_t pos = self.find(old); pos != std::string::npos; pos = self.find(old, pos)) {
    if (max >= 0 && ++occurrences > max) break;
    self.replace(pos, old.size(), replacement);
    pos += replacement.size();
  }
  return self;
}

std::tuple<std::string, std::string, std::string> partition(const std::string& self, const std::string& separator,
                                                            bool last) {
  size_t pos = last ? self.rfind(separator) : self.find(separator);
  if (pos == std::string::npos) {
    if (last) return {"", "", self};
    return {self, "", ""};
  }
  return {self.substr(0, pos), separator, self.substr(pos + separator.size())};
}

IValue stringList(std::vector<std::string> parts) { return IValue(parts); }

IValue split(const std::string& self, const std::optional<std::string>& separator, int64_t max) {
  std::vector<std::string> parts;
  if (!separator) {
    // Runs of whitespace separate words; max is ignored, as in 1.13.
    size_t prev = 0;
    for (size_t pos = self.find_first_of(kWhitespace); pos != std::string::npos;
         pos = self.find_first_of(kWhitespace, pos + 1)) {
      if (pos > prev) parts.push_back(self.substr(prev, pos - prev));
      prev = pos + 1;
    }
    if (prev < self.size()) parts.push_back(self.substr(prev));
    return stringList(std::move(parts));
  }
  KILN_CHECK(!separator->empty(), "ValueError: empty separator");
  size_t prev = 0;
  for (size_t pos = self.find(*separator); pos != std::string::npos; pos = self.find(*separator, prev)) {
    if (max >= 0 && static_cast<int64_t>(parts.size()) >= max) break;
    parts.push_back(self.substr(prev, pos - prev));
    prev = pos + separator->size();
  }
  parts.push_back(self.substr(prev));
  return stringList(std::move(parts));
}

IValue rsplit(const std::string& self, const std::string& separator, int64_t max) {
  KILN_CHECK(!separator.empty(), "ValueError: empty separator");
  std::vector<std::string> parts;
  size_t end = self.size();
  while (max < 0 || static_cast<int64_t>(parts.size()) < max) {
    if (end < separator.size()) break;
    size_t pos = self.rfind(separator, end - separator.size());
    if (pos == std::string::npos) break;
    parts.push_back(self.substr(pos + separator.size(), end - pos - separator.size()));
    end = pos;
  }
  parts.push_back(self.substr(0, end));
  std::reverse(parts.begin(), parts.end());
  return stringList(std::move(parts));
}

IValue splitLines(const std::string& self, bool keepends) {
  // 1.13 keeps a line break as an element of its own, and breaks "\r\n" twice.
  std::vector<std::string> parts;
  size_t prev = 0;
  for (size_t pos = self.find_first_of(kLineBreaks); pos != std::string::npos;
       pos = self.find_first_of(kLineBreaks, pos + 1)) {
    parts.push_back(self.substr(prev, pos - prev));
    if (keepends) parts.push_back(self.substr(pos, 1));
    prev = pos + 1;
  }
  if (prev != self.size()) parts.push_back(self.substr(prev));
  return stringList(std::move(parts));
}

std::string join(const std::string& self, const IValue& values) {
  std::string out;
  bool first = true;
  for (const IValue& v : values.toListRef().elements) {
    if (!first) out += self;
    out += v.toStringRef();
    first = false;
  }
  return out;
}

const std::string& strOf(const IValue& v) { return v.toStringRef(); }

std::string charAt(const IValue& s, int64_t index) {
  const std::string& str = strOf(s);
  return std::string(1, str[detail::checkedIndex(index, str.size(), "string")]);
}

// "0x" / "0o" / "0b" and the magnitude's digits; -2**63 has no int64 magnitude.
std::string inBase(int64_t i, int base) {
  uint64_t magnitude = i < 0 ? 0 - static_cast<uint64_t>(i) : static_cast<uint64_t>(i);
  std::ostringstream out;
  if (i < 0) out << '-';
  if (base == 2) {
    std::string bits = std::bitset<64>(magnitude).to_string();
    out << "0b" << bits.substr(std::min(bits.find_first_not_of('0'), bits.size() - 1));
  } else {
    out << (base == 16 ? "0x" : "0o") << (base == 16 ? std::hex : std::oct) << magnitude;
  }
  return out.str();
}

// "...{}...".format(args): each "{}" takes the next argument, printed as
// print() does; extra arguments are ignored.
void formatString(Stack& stack, size_t num_inputs) {
  const size_t base = stack.size() - num_inputs;
  const std::string& format = stack[base].toStringRef();
  std::ostringstream out;
  size_t used = 0;
  for (size_t begin = 0;;) {
    size_t loc = format.find("{}", begin);
    out << std::string_view(format).substr(begin, loc == std::string::npos ? std::string::npos : loc - begin);
    if (loc == std::string::npos) break;
    KILN_CHECK(used + 1 < num_inputs, "Too few arguments for format string: ", format);
    out << stack[base + 1 + used++];
    begin = loc + 2;
  }
  std::string result = out.str();
  stack.resize(base);
  stack.emplace_back(std::move(result));
}

// The name 1.13's messages give a value's kind (c10's IValue::tagKind).
const char* tagKind(const IValue& v) {
  switch (v.tag()) {
    case IValue::Tag::Double: return "Double";
    case IValue::Tag::Int: return "Int";
    case IValue::Tag::Bool: return "Bool";
    case IValue::Tag::String: return "String";
    case IValue::Tag::List: return "GenericList";
    case IValue::Tag::Tuple: return "Tuple";
    case IValue::Tag::Dict: return "GenericDict";
    case IValue::Tag::Object: return "Object";
    default: return v.tagName();
  }
}

double percentNumber(char key, const IValue& arg) {
  KILN_CHECK(arg.isInt() || arg.isDouble(), "%", key, " requires a number for formatting, but got ", tagKind(arg));
  return arg.isInt() ? static_cast<double>(arg.toInt()) : arg.toDouble();
}

// %d of a float: 1.13 converts to a C int, which x86 makes INT_MIN when out of range.
int32_t toCInt(double d) {
  if (!(d > -2147483649.0 && d < 2147483648.0)) return INT32_MIN;
  return static_cast<int32_t>(d);
}

void percentArg(std::ostream& out, char key, const IValue& arg) {
  switch (key) {
    case 'd':
    case 'i':
      if (arg.isInt()) {
        out << arg.toInt();
      } else {
        out << toCInt(percentNumber(key, arg));
      }
      return;
    case 'e':
    case 'E':
    case 'f':
    case 'F': {
      // Printed as a C float with six digits, as 1.13 does.
      std::ostringstream tmp;
      tmp << std::setprecision(6) << (key == 'e' || key == 'E' ? std::scientific : std::fixed);
      if (key == 'E') tmp << std::uppercase;
      tmp << static_cast<float>(percentNumber(key, arg));
      out << tmp.str();
      return;
    }
    case 'c':
      KILN_CHECK(arg.isInt() || (arg.isString() && arg.toStringRef().size() == 1), "%", key,
                 " requires an int or char for formatting, but got ", tagKind(arg));
      if (arg.isInt()) {
        out << static_cast<char>(arg.toInt());
      } else {
        out << arg.toStringRef();
      }
      return;
    case 's': out << arg; return;
    default: KILN_ERROR("The specifier %", key, " is not supported in TorchScript format strings");
  }
}

// "..." % args: args is one value, or a tuple of them.
void percentFormat(Stack& stack, size_t num_inputs) {
  const size_t base = stack.size() - num_inputs;
  const std::string& format = stack[base].toStringRef();
  const IValue& args = stack[base + 1];
  const size_t num_args = args.isTuple() ? args.toTupleRef().elements.size() : 1;
  std::ostringstream out;
  size_t used = 0;
  for (size_t begin = 0;;) {
    size_t percent = format.find('%', begin);
    out << std::string_view(format).substr(begin, percent == std::string::npos ? std::string::npos : percent - begin);
    if (percent == std::string::npos) break;
    KILN_CHECK(percent + 1 < format.size(), "Incomplete format specifier");
    char key = format[percent + 1];
    begin = percent + 2;
    if (key == '%') {
      out << '%';
      continue;
    }
    KILN_CHECK(used < num_args, "Too few arguments for format string");
    percentArg(out, key, args.isTuple() ? args.toTupleRef().elements[used] : args);
    ++used;
  }
  KILN_CHECK(used == num_args, "Too many arguments for format string");
  std::string result = out.str();
  stack.resize(base);
  stack.emplace_back(std::move(result));
}

template <void (*Impl)(Stack&, size_t)>
Operation varargOperation(const Node& node) {
  size_t num_inputs = node.inputs().size();
  return [num_inputs](Stack& stack) { Impl(stack, num_inputs); };
}

}  // namespace

KILN_REGISTER_SCRIPT_OPS(
    op("aten::str(t elem) -> str",
       [](const IValue& elem) {
         std::ostringstream out;
         out << elem;
         return out.str();
       }),
    nodeOp("aten::format(str self, ...) -> str", varargOperation<formatString>),
    nodeOp("aten::percentFormat(str self, ...) -> str", varargOperation<percentFormat>),

    // Operators: +, comparisons, len, indexing, slicing, list(s).
    op("aten::add.str(str a, str b) -> str", [](const IValue& a, const IValue& b) { return strOf(a) + strOf(b); }),
    op("aten::eq.str(str a, str b) -> bool", [](const IValue& a, const IValue& b) { return strOf(a) == strOf(b); }),
    op("aten::ne.str(str a, str b) -> bool", [](const IValue& a, const IValue& b) { return strOf(a) != strOf(b); }),
    op("aten::lt.str(str a, str b) -> bool", [](const IValue& a, const IValue& b) { return strOf(a) < strOf(b); }),
    op("aten::gt.str(str a, str b) -> bool", [](const IValue& a, const IValue& b) { return strOf(a) > strOf(b); }),
    op("aten::le.str(str a, str b) -> bool", [](const IValue& a, const IValue& b) { return strOf(a) <= strOf(b); }),
    op("aten::ge.str(str a, str b) -> bool", [](const IValue& a, const IValue& b) { return strOf(a) >= strOf(b); }),
    op("aten::len.str(str s) -> int", [](const IValue& s) { return static_cast<int64_t>(strOf(s).size()); }),
    op("aten::__getitem__.str(str s, int index) -> str", charAt),
    op("prim::StringIndex(str string, int index) -> str", charAt),
    op("aten::slice.str(str string, int? start=None, int? end=None, int step=1) -> str",
       [](const IValue& string, std::optional<int64_t> start, std::optional<int64_t> end, int64_t step) {
         const std::string& s = strOf(string);
         detail::SliceRange range = detail::sliceRange(static_cast<int64_t>(s.size()), start, end, step);
         std::string out;
         out.reserve(static_cast<size_t>(range.count));
         for (int64_t i = 0, j = range.start; i < range.count; ++i, j += step) out += s[static_cast<size_t>(j)];
         return out;
       }),
    op("aten::list(str t) -> str[]",
       [](const std::string& t) {
         std::vector<std::string> chars;
         for (char c : t) chars.emplace_back(1, c);
         return stringList(std::move(chars));
       }),

    // Splitting and joining.
    op("aten::split.str(str self, str? separator=None, int max=-1) -> str[]", split),
    op("aten::rsplit(str self, str separator=\" \", int max=-1) -> str[]", rsplit),
    op("aten::splitlines(str self, bool keepends=False) -> str[]", splitLines),
    op("aten::join(str self, str[] values) -> str", join),
    op("aten::partition(str self, str separator) -> (str, str, str)",
       [](const std::string& self, const std::string& separator) { return partition(self, separator, false); }),
    op("aten::rpartition(str self, str separator) -> (str, str, str)",
       [](const std::string& self, const std::string& separator) { return partition(self, separator, true); }),

    // Searching.
    op("aten::find(str self, str substr, int start=0, int end=-1) -> int",
       [](const std::string& self, const std::string& substr, int64_t start, int64_t end) {
         return findImpl(self, substr, start, end, false, "aten::find");
       }),
    op("aten::rfind(str self, str substr, int start=0, int end=-1) -> int",
       [](const std::string& self, const std::string& substr, int64_t start, int64_t end) {
         return findImpl(self, substr, start, end, true, "aten::rfind");
       }),
    op("aten::index.str(str self, str substr, int start=0, int end=-1) -> int",
       [](const std::string& self, const std::string& substr, int64_t start, int64_t end) {
         return indexImpl(self, substr, start, end, false, "aten::index");
       }),
    op("aten::rindex(str self, str substr, int start=0, int end=-1) -> int",
       [](const std::string& self, const std::string& substr, int64_t start, int64_t end) {
         return indexImpl(self, substr, start, end, true, "aten::rindex");
       }),
    op("aten::count(str self, str substr, int start=0, int end=-1) -> int", count),
    op("aten::startswith(str self, str substr, int start=0, int end=-1) -> bool",
       [](const std::string& self, const std::string& substr, int64_t start, int64_t end) {
         return affixMatch(self, substr, start, end, true, "aten::startswith");
       }),
    op("aten::endswith(str self, str substr, int start=0, int end=-1) -> bool",
       [](const std::string& self, const std::string& substr, int64_t start, int64_t end) {
         return affixMatch(self, substr, start, end, false, "aten::endswith");
       }),
    op("aten::replace(str self, str old, str new, int max=-1) -> str", replace),

    // Character classes.
    op("aten::isdigit(str self) -> bool", allChars<isDigit>), op("aten::isspace(str self) -> bool", allChars<isSpace>),
    op("aten::isalnum(str self) -> bool", allChars<isAlnum>), op("aten::isalpha(str self) -> bool", allChars<isAlpha>),
    op("aten::isdecimal(str self) -> bool", allChars<isDigit>),
    op("aten::isnumeric(str self) -> bool", allChars<isDigit>), op("aten::isupper(str self) -> bool", casedAs<isUpper>),
    op("aten::islower(str self) -> bool", casedAs<isLower>), op("aten::istitle(str self) -> bool", isTitle),
    op("aten::isidentifier(str self) -> bool", isIdentifier), op("aten::isprintable(str self) -> bool", isPrintable),

    // Case and padding.
    op("aten::upper(str self) -> str", mapChars<toUpper>), op("aten::lower(str self) -> str", mapChars<toLower>),
    op("aten::swapcase(str self) -> str", mapChars<swapCase>), op("aten::capitalize(str self) -> str", capitalize),
    op("aten::title(str self) -> str", title),
    op("aten::strip(str self, str chars=\" \\n\\t\\f\\v\") -> str",
       [](const std::string& self, const std::string& chars) { return strip(self, chars, true, true); }),
    op("aten::lstrip(str self, str chars=\" \\n\\t\\f\\v\") -> str",
       [](const std::string& self, const std::string& chars) { return strip(self, chars, true, false); }),
    op("aten::rstrip(str self, str chars=\" \\n\\t\\f\\v\") -> str",
       [](const std::string& self, const std::string& chars) { return strip(self, chars, false, true); }),
    op("aten::center(str self, int width, str fillchar=\" \") -> str", center),
    op("aten::ljust(str self, int width, str fillchar=\" \") -> str",
       [](const std::string& self, int64_t width, const std::string& fillchar) {
         return justify(self, width, fillchar, true);
       }),
    op("aten::rjust(str self, int width, str fillchar=\" \") -> str",
       [](const std::string& self, int64_t width, const std::string& fillchar) {
         return justify(self, width, fillchar, false);
       }),
    op("aten::zfill(str self, int width) -> str", zfill),
    op("aten::expandtabs(str self, int tabsize=8) -> str", expandTabs),

    // Characters and numbers.
    op("aten::ord(str string) -> int",
       [](const std::string& string) {
         KILN_CHECK(string.size() == 1, "String for ord() must be 1 character, found ", string.size());
         return static_cast<int64_t>(static_cast<uint8_t>(string[0]));
       }),
    op("aten::chr(int i) -> str",
       [](int64_t i) {
         // 1.13 makes one byte of the code point (chr(200) is the byte 0xC8).
         KILN_CHECK(i >= 0 && i < 1114111, "chr() arg not in range(0x110000), found ", i);
         return std::string(1, static_cast<char>(i));
       }),
    op("aten::hex(int i) -> str", [](int64_t i) { return inBase(i, 16); }),
    op("aten::oct(int i) -> str", [](int64_t i) { return inBase(i, 8); }),
    op("aten::bin(int i) -> str", [](int64_t i) { return inBase(i, 2); }), );

}  // namespace kiln
