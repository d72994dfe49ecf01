#include "kiln/util/jit_log.h"

#include <atomic>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <unordered_map>

namespace kiln {

namespace {

struct JitLogConfig {
  std::mutex mutex;
  // Read without the lock: false when nothing is logged (the usual case).
  std::atomic<bool> any{true};
  bool loaded = false;
  // File stem ("dead_code_elimination") -> the most detailed level logged.
  std::unordered_map<std::string, JitLoggingLevel> files;
  std::ostream* out = &std::cerr;
};

JitLogConfig& config() {
  static JitLogConfig* c = new JitLogConfig();  // outlives static destructors
  return *c;
}

std::string stem(std::string_view path) {
  size_t slash = path.find_last_of('/');
  if (slash != std::string_view::npos) path.remove_prefix(slash + 1);
  if (path.size() > 4 && path.substr(path.size() - 4) == ".cpp") path.remove_suffix(4);
  return std::string(path);
}

void parse(JitLogConfig& c, const std::string& spec) {
  c.files.clear();
  size_t start = 0;
  while (start <= spec.size()) {
    size_t end = spec.find(':', start);
    if (end == std::string::npos) end = spec.size();
    std::string_view entry(spec.data() + start, end - start);
    auto level = JitLoggingLevel::GRAPH_UPDATE;
    size_t arrows = 0;
    while (arrows < entry.size() && entry[arrows] == '>') ++arrows;
    if (arrows > 0) level = JitLoggingLevel::GRAPH_DEBUG;
    entry.remove_prefix(arrows);
    if (!entry.empty()) c.files[stem(entry)] = level;
    start = end + 1;
  }
  c.loaded = true;
  c.any.store(!c.files.empty(), std::memory_order_release);
}

// Loads KILN_JIT_LOG_LEVEL once; the lock must be held.
void load(JitLogConfig& c) {
  if (c.loaded) return;
  const char* spec = std::getenv("KILN_JIT_LOG_LEVEL");
  parse(c, spec ? spec : "");
}

const char* levelName(JitLoggingLevel level) {
  switch (level) {
    case JitLoggingLevel::GRAPH_DUMP: return "DUMP";
    case JitLoggingLevel::GRAPH_UPDATE: return "UPDATE";
    case JitLoggingLevel::GRAPH_DEBUG: return "DEBUG";
  }
  return "?";
}

}  // namespace

bool isJitLogEnabled(const char* file, JitLoggingLevel level) {
  JitLogConfig& c = config();
  if (!c.any.load(std::memory_order_acquire)) return false;
  std::lock_guard lock(c.mutex);
  load(c);
  if (c.files.empty()) return false;
  auto it = c.files.find(stem(file));
  return it != c.files.end() && level <= it->second;
}

void setJitLogLevels(const std::string& spec) {
  JitLogConfig& c = config();
  std::lock_guard lock(c.mutex);
  parse(c, spec);
}

void setJitLogStream(std::ostream* out) {
  JitLogConfig& c = config();
  std::lock_guard lock(c.mutex);
  c.out = out ? out : &std::cerr;
}

void writeJitLog(JitLoggingLevel level, const char* file, int line, const std::string& message) {
  std::string name(file);
  name = name.substr(name.find_last_of('/') + 1);
  std::string prefix = std::string("[") + levelName(level) + " " + name + ":" + std::to_string(line) + "] ";
  std::string text;
  size_t start = 0;
  while (start < message.size()) {
    size_t end = message.find('\n', start);
    if (end == std::string::npos) end = message.size();
    text += prefix;
    text.append(message, start, end - start);
    text += '\n';
    start = end + 1;
  }
  if (message.empty()) text = prefix + "\n";
  JitLogConfig& c = config();
  std::lock_guard lock(c.mutex);
  *c.out << text << std::flush;
}

}  // namespace kiln
