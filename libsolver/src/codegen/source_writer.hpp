// The one writer of generated CUDA source: lines indented two spaces per open block, blocks opened
// with "head {" and closed with "}", and fresh numbers for names. Every generator family writes
// through it, so that the text of all kernels is laid out alike. The one style, in two forms:
//   - code the generator shapes (unrolled loops, lines that depend on the configuration):
//     line() / open() / close();
//   - a fixed block of text (a prelude, a device helper, a whole kernel body with a few holes):
//     a raw string, its holes written @KEY@ and filled by fill_placeholders(), emitted with raw()
//     (or returned whole, as the staged and shared_memory kernels are).
// Every kernel starts with codegen::kernel_prelude (prelude.hpp), the one set of macros and types.
#pragma once

#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace batchsolve::codegen {

// Replaces every @KEY@ of `text` by its value: the kernels written as raw-string templates (staged,
// shared_memory) fill their literals with it.
inline std::string fill_placeholders(std::string text, const std::vector<std::pair<std::string, std::string>>& values) {
    for (const auto& [key, value] : values) {
        const std::string token = "@" + key + "@";
        for (std::size_t at = text.find(token); at != std::string::npos; at = text.find(token, at + value.size()))
            text.replace(at, token.size(), value);
    }
    return text;
}

class SourceWriter {
public:
    explicit SourceWriter(int indent = 0) : indent_(indent) {}

    // One line at the current indentation.
    void line(const std::string& text) { out_ << indentation() << text << '\n'; }
    // "head {" (or "{" for an empty head), an optional trailing comment, and one level deeper.
    void open(const std::string& head, const std::string& comment = "") {
        line(head + (head.empty() ? "{" : " {") + (comment.empty() ? "" : "  // " + comment));
        ++indent_;
    }
    // One level back and "}" followed by `tail` (e.g. ";" or "  // end of panel").
    void close(const std::string& tail = "") {
        --indent_;
        line("}" + tail);
    }
    // Text as it is (already indented, or a block of its own).
    void raw(const std::string& text) { out_ << text; }

    std::string indentation() const { return std::string(2 * indent_, ' '); }
    void set_indent(int indent) { indent_ = indent; }

    // A number not handed out before by this writer (0, 1, 2, ...): suffixes of fresh names.
    int next_id() { return counter_++; }

    std::string str() const { return out_.str(); }
    // The text so far, and an empty writer for the next function (indentation and numbering kept).
    std::string take() {
        std::string text = out_.str();
        out_.str("");
        return text;
    }

private:
    std::ostringstream out_;
    int indent_ = 0;
    int counter_ = 0;
};

}  // namespace batchsolve::codegen
