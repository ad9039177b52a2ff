// A small strict JSON reader (RFC 8259) for checking the trace files the profiler writes, so the
// test needs nothing outside this repository. It rejects what a strict parser rejects: trailing
// commas, unescaped control characters, bad escapes, invalid UTF-8, NaN, leading zeros, and text
// after the value.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace switchyard::testing {

struct JsonValue {
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject };
  Kind kind = Kind::kNull;
  bool boolean = false;
  double number = 0;
  std::string text;
  std::vector<JsonValue> items;
  std::map<std::string, JsonValue> members;
  std::vector<std::string> member_order;  // duplicate keys are an error

  bool has(const std::string& key) const { return members.count(key) != 0; }
  const JsonValue& at(const std::string& key) const {
    auto found = members.find(key);
    if (found == members.end()) throw std::runtime_error("no member '" + key + "'");
    return found->second;
  }
};

class JsonReader {
 public:
  explicit JsonReader(std::string text) : text_(std::move(text)) {}

  // The document's value; throws std::runtime_error naming the offset on any error.
  JsonValue parse() {
    skip_space();
    JsonValue value = parse_value(0);
    skip_space();
    if (pos_ != text_.size()) fail("text after the value");
    return value;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error("JSON error at offset " + std::to_string(pos_) + ": " + what);
  }
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void expect(char c) {
    if (peek() != c) fail(std::string("expected '") + c + "'");
    ++pos_;
  }
  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' ||
                                   text_[pos_] == '\r' || text_[pos_] == '\t')) {
      ++pos_;
    }
  }
  void literal(const char* word) {
    for (const char* c = word; *c != '\0'; ++c) expect(*c);
  }

  JsonValue parse_value(int depth) {
    if (depth > 64) fail("nesting too deep");
    JsonValue v;
    const char c = peek();
    if (c == '{') return parse_object(depth);
    if (c == '[') return parse_array(depth);
    if (c == '"') {
      v.kind = JsonValue::Kind::kString;
      v.text = parse_string();
    } else if (c == 't' || c == 'f') {
      v.kind = JsonValue::Kind::kBool;
      v.boolean = c == 't';
      literal(v.boolean ? "true" : "false");
    } else if (c == 'n') {
      literal("null");
    } else {
      v.kind = JsonValue::Kind::kNumber;
      v.number = parse_number();
    }
    return v;
  }

  JsonValue parse_object(int depth) {
    JsonValue v;
    v.kind = JsonValue::Kind::kObject;
    expect('{');
    skip_space();
    if (peek() == '}') {
      ++pos_;
      return v;
    }
    while (true) {
      skip_space();
      if (peek() != '"') fail("expected a member name");
      std::string key = parse_string();
      if (v.members.count(key) != 0) fail("duplicate key '" + key + "'");
      skip_space();
      expect(':');
      skip_space();
      v.members.emplace(key, parse_value(depth + 1));
      v.member_order.push_back(key);
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      expect('}');
      return v;
    }
  }

  JsonValue parse_array(int depth) {
    JsonValue v;
    v.kind = JsonValue::Kind::kArray;
    expect('[');
    skip_space();
    if (peek() == ']') {
      ++pos_;
      return v;
    }
    while (true) {
      skip_space();
      v.items.push_back(parse_value(depth + 1));
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      expect(']');
      return v;
    }
  }

  double parse_number() {
    const size_t start = pos_;
    if (peek() == '-') ++pos_;
    if (peek() == '0') {
      ++pos_;
    } else if (peek() >= '1' && peek() <= '9') {
      while (peek() >= '0' && peek() <= '9') ++pos_;
    } else {
      fail("expected a value");
    }
    if (peek() == '.') {
      ++pos_;
      if (!(peek() >= '0' && peek() <= '9')) fail("digits must follow '.'");
      while (peek() >= '0' && peek() <= '9') ++pos_;
    }
    if (peek() == 'e' || peek() == 'E') {
      ++pos_;
      if (peek() == '+' || peek() == '-') ++pos_;
      if (!(peek() >= '0' && peek() <= '9')) fail("digits must follow the exponent");
      while (peek() >= '0' && peek() <= '9') ++pos_;
    }
    return std::stod(text_.substr(start, pos_ - start));
  }

  uint32_t parse_hex4() {
    uint32_t code = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = peek();
      code <<= 4;
      if (c >= '0' && c <= '9') {
        code |= static_cast<uint32_t>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        code |= static_cast<uint32_t>(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        code |= static_cast<uint32_t>(c - 'A' + 10);
      } else {
        fail("bad \\u escape");
      }
      ++pos_;
    }
    return code;
  }

  static void append_utf8(std::string& out, uint32_t code) {
    if (code < 0x80) {
      out += static_cast<char>(code);
    } else if (code < 0x800) {
      out += static_cast<char>(0xc0 | (code >> 6));
      out += static_cast<char>(0x80 | (code & 0x3f));
    } else if (code < 0x10000) {
      out += static_cast<char>(0xe0 | (code >> 12));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (code & 0x3f));
    } else {
      out += static_cast<char>(0xf0 | (code >> 18));
      out += static_cast<char>(0x80 | ((code >> 12) & 0x3f));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (code & 0x3f));
    }
  }

  void parse_escape(std::string& out) {
    const char c = peek();
    ++pos_;
    switch (c) {
      case '"':
        out += '"';
        break;
      case '\\':
        out += '\\';
        break;
      case '/':
        out += '/';
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'u': {
        uint32_t code = parse_hex4();
        if (code >= 0xd800 && code <= 0xdbff) {
          literal("\\u");
          const uint32_t low = parse_hex4();
          if (low < 0xdc00 || low > 0xdfff) fail("unpaired surrogate");
          code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
        } else if (code >= 0xdc00 && code <= 0xdfff) {
          fail("unpaired surrogate");
        }
        append_utf8(out, code);
        break;
      }
      default:
        fail("bad escape");
    }
  }

  // Checks one UTF-8 sequence at pos_ and copies it.
  void copy_utf8(std::string& out) {
    const auto lead = static_cast<uint8_t>(text_[pos_]);
    const size_t length = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc2 ? 2 : 0;
    if (length == 0 || lead > 0xf4 || pos_ + length > text_.size()) fail("invalid UTF-8");
    for (size_t k = 1; k < length; ++k) {
      if ((static_cast<uint8_t>(text_[pos_ + k]) & 0xc0) != 0x80) fail("invalid UTF-8");
    }
    out.append(text_, pos_, length);
    pos_ += length;
  }

  std::string parse_string() {
    expect('"');
    std::string out;
    while (true) {
      if (pos_ >= text_.size()) fail("unterminated string");
      const auto c = static_cast<uint8_t>(text_[pos_]);
      if (c == '"') {
        ++pos_;
        return out;
      }
      if (c < 0x20) fail("unescaped control character in a string");
      if (c == '\\') {
        ++pos_;
        parse_escape(out);
      } else if (c >= 0x80) {
        copy_utf8(out);
      } else {
        out += static_cast<char>(c);
        ++pos_;
      }
    }
  }

  std::string text_;
  size_t pos_ = 0;
};

}  // namespace switchyard::testing
