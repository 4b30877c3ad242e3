// Rating sets: CSR construction, text importers, the HDF5 ratings file, split and generator.
#include "ratings.hpp"

#include <omp.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <numeric>
#include <random>
#include <sstream>
#include <unordered_map>

#include "batchsolve_io/hdf5.hpp"

namespace als {

namespace h5 = batchsolve::io::h5;

// Largest side a CSR can index with its 32-bit column indices.
constexpr std::int64_t max_side = std::int64_t(INT32_MAX);

Csr transpose(const Csr& m) {
    Csr t;
    t.rows = m.cols, t.cols = m.rows;
    t.indptr.assign(std::size_t(t.rows + 1), 0);
    t.indices.resize(m.indices.size());
    t.values.resize(m.values.size());
    // A counting sort, parallel over blocks of m's rows of about equal entries: each thread counts
    // its block's columns, the prefix sums over (column, block) give each block its own run inside
    // every row of t, and each block scatters its rows in increasing order, so every row of t comes
    // out sorted and the result is the serial one whatever the thread count. One count per column
    // and thread: more threads than fit a 256 MiB budget of counts are not used.
    const std::int64_t nnz = m.nnz();
    const std::int64_t by_memory = std::max<std::int64_t>(1, (std::int64_t(1) << 25) / std::max<std::int64_t>(t.rows, 1));
    const int blocks = int(std::clamp<std::int64_t>(std::min<std::int64_t>(omp_get_max_threads(), by_memory), 1,
                                                    std::max<std::int64_t>(1, nnz / (1 << 16))));
    std::vector<std::int64_t> first_row(std::size_t(blocks + 1), m.rows);
    for (int b = 0; b <= blocks; ++b) {
        const std::int64_t target = nnz * b / blocks;
        first_row[std::size_t(b)] = std::lower_bound(m.indptr.begin(), m.indptr.end(), target) - m.indptr.begin();
    }
    first_row[0] = 0, first_row[std::size_t(blocks)] = m.rows;
    std::vector<std::int64_t> next(std::size_t(blocks) * std::size_t(t.rows), 0);  // [block][column]
#pragma omp parallel num_threads(blocks)
    {
#pragma omp for schedule(static, 1)
        for (int b = 0; b < blocks; ++b) {
            std::int64_t* count = &next[std::size_t(b) * std::size_t(t.rows)];
            for (std::int64_t e = m.indptr[first_row[b]]; e < m.indptr[first_row[b + 1]]; ++e) ++count[m.indices[e]];
        }
#pragma omp single
        {
            std::int64_t at = 0;
            for (std::int64_t c = 0; c < t.rows; ++c) {
                t.indptr[std::size_t(c)] = at;
                for (int b = 0; b < blocks; ++b) {
                    std::int64_t& slot = next[std::size_t(b) * std::size_t(t.rows) + std::size_t(c)];
                    const std::int64_t n = slot;
                    slot = at, at += n;
                }
            }
            t.indptr[std::size_t(t.rows)] = at;
        }
#pragma omp for schedule(static, 1)
        for (int b = 0; b < blocks; ++b) {
            std::int64_t* dst = &next[std::size_t(b) * std::size_t(t.rows)];
            for (std::int64_t r = first_row[b]; r < first_row[b + 1]; ++r)
                for (std::int64_t e = m.indptr[r]; e < m.indptr[r + 1]; ++e) {
                    const std::int64_t d = dst[m.indices[e]]++;
                    t.indices[d] = std::int32_t(r);
                    t.values[d] = m.values[e];
                }
        }
    }
    return t;
}

const char* to_string(Feedback f) { return f == Feedback::explicit_ratings ? "explicit" : "implicit"; }
Feedback parse_feedback(const std::string& text) {
    if (text == "explicit") return Feedback::explicit_ratings;
    if (text == "implicit") return Feedback::implicit_counts;
    throw Error("feedback must be explicit or implicit (got '" + text + "')");
}

Duplicates parse_duplicates(const std::string& text) {
    if (text == "sum") return Duplicates::sum;
    if (text == "last") return Duplicates::last;
    if (text == "error") return Duplicates::error;
    throw Error("--duplicates must be sum, last or error (got '" + text + "')");
}
const char* to_string(Duplicates d) { return d == Duplicates::sum ? "sum" : d == Duplicates::last ? "last" : "error"; }

Ratings from_triplets(Feedback feedback, std::vector<std::string> user_ids, std::vector<std::string> item_ids,
                      const std::vector<std::int32_t>& users, const std::vector<std::int32_t>& items,
                      const std::vector<float>& values, std::string provenance) {
    if (std::int64_t(user_ids.size()) > max_side || std::int64_t(item_ids.size()) > max_side)
        throw Error("more than 2^31 - 1 users or items");
    Ratings r;
    r.feedback = feedback;
    r.provenance = std::move(provenance);
    Csr& m = r.by_user;
    m.rows = std::int64_t(user_ids.size()), m.cols = std::int64_t(item_ids.size());
    m.indptr.assign(std::size_t(m.rows + 1), 0);
    for (std::int32_t u : users) ++m.indptr[std::size_t(u) + 1];
    std::partial_sum(m.indptr.begin(), m.indptr.end(), m.indptr.begin());
    m.indices.resize(users.size());
    m.values.resize(users.size());
    std::vector<std::int64_t> next(m.indptr.begin(), m.indptr.end() - 1);
    for (std::size_t e = 0; e < users.size(); ++e) {
        const std::int64_t dst = next[std::size_t(users[e])]++;
        m.indices[dst] = items[e];
        m.values[dst] = values[e];
    }
    // Sort each row by item (rows are short; a permutation per row).
    std::vector<std::pair<std::int32_t, float>> row;
    for (std::int64_t u = 0; u < m.rows; ++u) {
        const std::int64_t b = m.indptr[u], e = m.indptr[u + 1];
        row.clear();
        for (std::int64_t j = b; j < e; ++j) row.emplace_back(m.indices[j], m.values[j]);
        std::sort(row.begin(), row.end(), [](auto& x, auto& y) { return x.first < y.first; });
        for (std::int64_t j = b; j < e; ++j) {
            if (j > b && row[j - b].first == row[j - b - 1].first)
                throw Error("from_triplets: user " + std::to_string(u) + " rates item " + std::to_string(row[j - b].first) +
                            " twice");
            m.indices[j] = row[j - b].first, m.values[j] = row[j - b].second;
        }
    }
    r.by_item = transpose(m);
    r.user_ids = std::move(user_ids);
    r.item_ids = std::move(item_ids);
    return r;
}

// ---- text import ---------------------------------------------------------------------------------

TextFormat named_format(const std::string& name) {
    TextFormat f;
    f.name = name;
    if (name == "movielens-csv") {
        f.delimiter = ",", f.header = true;
    } else if (name == "movielens-100k") {
        f.delimiter = "\t";
    } else if (name == "movielens-dat") {
        f.delimiter = "::";
    } else if (name == "lastfm") {
        f.delimiter = "\t", f.header = true, f.feedback = Feedback::implicit_counts, f.duplicates = Duplicates::sum;
    } else if (name == "csv") {
        f.delimiter = ",";
    } else if (name == "tsv") {
        f.delimiter = "\t";
    } else {
        throw Error("--format must be movielens-csv, movielens-100k, movielens-dat, lastfm, csv or tsv (got '" + name +
                    "')");
    }
    return f;
}

namespace {

// Splits a line into fields by the delimiter (" ": runs of spaces and tabs). Trailing '\r' is dropped.
void split_fields(const std::string& line, const std::string& delimiter, std::vector<std::string>& fields) {
    fields.clear();
    std::string s = line;
    if (!s.empty() && s.back() == '\r') s.pop_back();
    if (delimiter == " ") {
        std::istringstream in(s);
        std::string w;
        while (in >> w) fields.push_back(w);
        return;
    }
    std::size_t start = 0;
    while (true) {
        const std::size_t pos = s.find(delimiter, start);
        if (pos == std::string::npos) {
            fields.push_back(s.substr(start));
            return;
        }
        fields.push_back(s.substr(start, pos - start));
        start = pos + delimiter.size();
    }
}

std::string trim(const std::string& s) {
    const auto b = s.find_first_not_of(" \t\"");
    if (b == std::string::npos) return "";
    const auto e = s.find_last_not_of(" \t\"");
    return s.substr(b, e - b + 1);
}

// Parses a whole field as a finite decimal number; false on anything else ("4 stars", "", "nan",
// "1e999", and hexadecimal floats such as "0x1p3", which strtod would take but no ratings file means).
bool parse_number(const std::string& text, double& value) {
    const std::string t = trim(text);
    if (t.empty() || t.find_first_not_of("0123456789+-.eE") != std::string::npos) return false;
    errno = 0;
    char* end = nullptr;
    value = std::strtod(t.c_str(), &end);
    return end == t.c_str() + t.size() && errno == 0 && std::isfinite(value);
}

struct IdMap {
    std::unordered_map<std::string, std::int32_t> index;
    std::vector<std::string> ids;
    std::int32_t get(const std::string& id) {
        auto [it, inserted] = index.emplace(id, std::int32_t(ids.size()));
        if (inserted) {
            if (std::int64_t(ids.size()) >= max_side) throw Error("more than 2^31 - 1 distinct ids");
            ids.push_back(id);
        }
        return it->second;
    }
};

}  // namespace

Ratings import_text(const std::string& path, const TextFormat& format, bool skip_bad, ImportReport* report) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error(path + ": cannot open for reading");
    const int needed = std::max({format.user_column, format.item_column, format.rating_column}) + 1;
    if (format.user_column < 0 || format.item_column < 0 || format.user_column == format.item_column)
        throw Error("the user and item columns must be different and >= 0");
    IdMap users, items;
    std::vector<std::int32_t> us, is;
    std::vector<float> vs;
    std::vector<std::int64_t> line_of;  // source line of each kept entry (for the duplicate error)
    ImportReport rep;
    std::string line;
    std::vector<std::string> fields;
    std::int64_t line_number = 0;
    auto bad = [&](const std::string& reason) {
        const std::string where = path + ":" + std::to_string(line_number) + ": " + reason;
        if (!skip_bad) throw Error(where + " (pass --skip-bad to skip and count such lines)");
        if (rep.bad_lines++ == 0) rep.first_bad = where;
    };
    while (std::getline(in, line)) {
        ++line_number;
        // A UTF-8 byte-order mark (spreadsheet exports) is not part of the first field.
        if (line_number == 1 && line.compare(0, 3, "\xEF\xBB\xBF") == 0) line.erase(0, 3);
        if (line_number == 1 && format.header) continue;
        if (trim(line).empty()) continue;  // blank lines (a trailing newline) are not data
        ++rep.lines;
        split_fields(line, format.delimiter, fields);
        if (int(fields.size()) < needed) {
            bad("expected at least " + std::to_string(needed) + " fields separated by '" +
                (format.delimiter == "\t" ? std::string("\\t") : format.delimiter) + "', found " +
                std::to_string(fields.size()));
            continue;
        }
        const std::string user = trim(fields[std::size_t(format.user_column)]);
        const std::string item = trim(fields[std::size_t(format.item_column)]);
        if (user.empty() || item.empty()) {
            bad(std::string("empty ") + (user.empty() ? "user" : "item") + " id");
            continue;
        }
        // HDF5 stores ids as C strings: a NUL byte would cut the id short (two ids becoming one).
        if (user.find('\0') != std::string::npos || item.find('\0') != std::string::npos) {
            bad(std::string(user.find('\0') != std::string::npos ? "user" : "item") + " id contains a NUL byte");
            continue;
        }
        double value = 1;
        if (format.rating_column >= 0 && !parse_number(fields[std::size_t(format.rating_column)], value)) {
            bad("rating '" + trim(fields[std::size_t(format.rating_column)]) + "' is not a finite number in decimal notation");
            continue;
        }
        if (format.feedback == Feedback::implicit_counts && value < 0) {
            bad("implicit count " + trim(fields[std::size_t(format.rating_column)]) + " is negative");
            continue;
        }
        if (std::fabs(value) > 3.0e38) {
            bad("rating out of the float range");
            continue;
        }
        // Ratings are stored as float: a non-zero value below its smallest normal number would be
        // flushed to 0 or keep only a few bits (1e-50 -> 0), silently changing the data.
        if (value != 0 && std::fabs(value) < 1.17549435e-38) {
            bad("rating '" + trim(fields[std::size_t(format.rating_column)]) + "' is too small for a float (below 1.2e-38; it would become 0)");
            continue;
        }
        us.push_back(users.get(user));
        is.push_back(items.get(item));
        vs.push_back(float(value));
        line_of.push_back(line_number);
    }
    if (in.bad()) throw Error(path + ": read error after line " + std::to_string(line_number));
    if (us.empty())
        throw Error(path + ": no ratings found (" + std::to_string(line_number) + " lines, " +
                    std::to_string(rep.bad_lines) + " malformed)");

    // Merge repeated (user, item) pairs by the stated rule, in line order.
    std::vector<std::size_t> order(us.size());
    std::iota(order.begin(), order.end(), std::size_t(0));
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return us[a] != us[b] ? us[a] < us[b] : is[a] < is[b];
    });
    std::vector<std::int32_t> mu, mi;
    std::vector<float> mv;
    mu.reserve(us.size()), mi.reserve(us.size()), mv.reserve(us.size());
    for (std::size_t k = 0; k < order.size(); ++k) {
        const std::size_t e = order[k];
        if (!mu.empty() && mu.back() == us[e] && mi.back() == is[e]) {
            ++rep.duplicates_merged;
            if (format.duplicates == Duplicates::error)
                throw Error(path + ":" + std::to_string(line_of[e]) + ": user '" + users.ids[std::size_t(us[e])] +
                            "' and item '" + items.ids[std::size_t(is[e])] + "' repeat line " +
                            std::to_string(line_of[order[k - 1]]) + " (--duplicates sum|last resolves it)");
            if (format.duplicates == Duplicates::sum) mv.back() += vs[e];
            else mv.back() = vs[e];
            continue;
        }
        mu.push_back(us[e]), mi.push_back(is[e]), mv.push_back(vs[e]);
    }
    std::ostringstream prov;
    prov << "import " << format.name << " '" << path << "' lines=" << rep.lines << " bad_skipped=" << rep.bad_lines
         << " duplicates=" << to_string(format.duplicates) << " merged=" << rep.duplicates_merged;
    if (report) *report = rep;
    return from_triplets(format.feedback, std::move(users.ids), std::move(items.ids), mu, mi, mv, prov.str());
}

// ---- HDF5 ----------------------------------------------------------------------------------------

namespace {
constexpr const char* ratings_format_tag = "als-ratings";
constexpr std::int64_t ratings_format_version = 1;

void write_csr(h5::File& f, const std::string& group, const Csr& m) {
    // Uncompressed: deflate costs a minute on a 20 M-interaction set and saves little on indices.
    f.write(group + "/indptr", m.indptr.data(), h5::Shape{m.indptr.size()}, false);
    f.write(group + "/indices", m.indices.data(), h5::Shape{m.indices.size()}, false);
    f.write(group + "/values", m.values.data(), h5::Shape{m.values.size()}, false);
    f.set_attribute(group, "rows", m.rows);
    f.set_attribute(group, "cols", m.cols);
}
}  // namespace

void write_ratings(const std::string& path, const Ratings& r, bool force, const std::vector<std::string>& inputs,
                   const std::string& command_line) {
    h5::File f = h5::File::create(path, force ? h5::Existing::replace : h5::Existing::refuse, inputs);
    f.set_attribute("/", "format", ratings_format_tag);
    f.set_attribute("/", "version", ratings_format_version);
    f.set_attribute("/", "feedback", to_string(r.feedback));
    f.set_attribute("/", "provenance", r.provenance);
    f.set_attribute("/", "command", command_line);
    f.set_attribute("/", "users", r.users());
    f.set_attribute("/", "items", r.items());
    f.set_attribute("/", "interactions", r.nnz());
    f.write_strings("/users/ids", r.user_ids);
    f.write_strings("/items/ids", r.item_ids);
    write_csr(f, "/by_user", r.by_user);
    write_csr(f, "/by_item", r.by_item);
    f.commit();
}

// Checks a CSR read from a file; throws Error "<file>: <dataset>: <reason>".
static void validate_csr(const std::string& path, const std::string& group, const Csr& m, bool threads) {
    auto fail = [&](const std::string& ds, const std::string& why) { throw Error(path + ": " + group + "/" + ds + ": " + why); };
    if (std::int64_t(m.indptr.size()) != m.rows + 1)
        fail("indptr", "has " + std::to_string(m.indptr.size()) + " entries, expected rows + 1 = " + std::to_string(m.rows + 1));
    if (m.indptr[0] != 0) fail("indptr", "does not start at 0");
    for (std::int64_t r = 0; r < m.rows; ++r)
        if (m.indptr[r + 1] < m.indptr[r]) fail("indptr", "decreases at row " + std::to_string(r));
    if (m.indptr.back() != m.nnz() || m.values.size() != m.indices.size())
        fail("indptr", "ends at " + std::to_string(m.indptr.back()) + " but indices/values hold " +
                           std::to_string(m.indices.size()) + "/" + std::to_string(m.values.size()));
    // The entries are checked in parallel first; only a file that fails is walked again serially,
    // for the message naming its first bad entry.
    bool ok = true;
    const std::int32_t* idx = m.indices.data();
    const float* val = m.values.data();
    const std::int64_t cols = m.cols;
#pragma omp parallel for schedule(dynamic, 1024) reduction(&& : ok) if (threads)
    for (std::int64_t r = 0; r < m.rows; ++r) {
        bool row_ok = true;
        const std::int64_t b = m.indptr[std::size_t(r)], e = m.indptr[std::size_t(r + 1)];
        for (std::int64_t x = b; x < e; ++x)
            row_ok &= idx[x] >= 0 && idx[x] < cols && (x == b || idx[x] > idx[x - 1]) && std::isfinite(val[x]);
        ok = ok && row_ok;
    }
    if (ok) return;
    for (std::int64_t r = 0; r < m.rows; ++r)
        for (std::int64_t e = m.indptr[r]; e < m.indptr[r + 1]; ++e) {
            if (m.indices[e] < 0 || m.indices[e] >= m.cols)
                fail("indices", "entry " + std::to_string(e) + " = " + std::to_string(m.indices[e]) + " outside [0, " +
                                    std::to_string(m.cols) + ")");
            if (e > m.indptr[r] && m.indices[e] <= m.indices[e - 1])
                fail("indices", "row " + std::to_string(r) + " is not sorted or repeats an index");
            if (!std::isfinite(m.values[e])) fail("values", "entry " + std::to_string(e) + " is not finite");
        }
}

namespace {
// The part of a ratings file read before its arrays: format, version, feedback, provenance and ids.
h5::File open_ratings(const std::string& path, Ratings& r) {
    h5::File f = h5::File::open(path);
    if (!f.has_attribute("/", "format") || f.string_attribute("/", "format") != ratings_format_tag)
        throw Error(path + ": /: not an ALS ratings file (attribute format != '" + std::string(ratings_format_tag) + "')");
    const std::int64_t version = f.int_attribute("/", "version");
    if (version != ratings_format_version)
        throw Error(path + ": /: format version " + std::to_string(version) + " is not supported (expected " +
                    std::to_string(ratings_format_version) + ")");
    r.feedback = parse_feedback(f.string_attribute("/", "feedback"));
    r.provenance = f.has_attribute("/", "provenance") ? f.string_attribute("/", "provenance") : "";
    r.user_ids = f.read_strings("/users/ids");
    r.item_ids = f.read_strings("/items/ids");
    if (std::int64_t(r.user_ids.size()) > max_side || std::int64_t(r.item_ids.size()) > max_side)
        throw Error(path + ": /users/ids: more than 2^31 - 1 ids");
    return f;
}
}  // namespace

void probe_ratings(const std::string& path) {
    try {
        Ratings r;
        h5::File f = open_ratings(path, r);
        auto probe = [&](const char* dataset, auto element) {
            if (!f.stored_plainly(dataset)) {
                f.read<decltype(element)>(dataset);  // chunks and filters decoded here, in the child
                return;
            }
            const h5::Shape shape = f.shape(dataset);
            if (shape.size() != 1) throw Error(path + ": " + dataset + ": must be 1-D, is " + h5::shape_text(shape));
        };
        probe("/by_user/indptr", std::int64_t());
        probe("/by_user/indices", std::int32_t());
        probe("/by_user/values", float());
    } catch (const batchsolve::io::FileError& e) {
        throw Error(e.what());
    }
}

Ratings read_ratings(const std::string& path, bool item_side, bool threads) {
    try {
        Ratings r;
        h5::File f = open_ratings(path, r);
        Csr& m = r.by_user;
        m.rows = std::int64_t(r.user_ids.size()), m.cols = std::int64_t(r.item_ids.size());
        h5::Shape shape;
        m.indptr = f.read<std::int64_t>("/by_user/indptr", &shape);
        if (shape.size() != 1) throw Error(path + ": /by_user/indptr: must be 1-D, is " + h5::shape_text(shape));
        if (m.indptr.empty()) throw Error(path + ": /by_user/indptr: is empty (expected users + 1 entries)");
        m.indices = f.read<std::int32_t>("/by_user/indices", &shape);
        if (shape.size() != 1) throw Error(path + ": /by_user/indices: must be 1-D, is " + h5::shape_text(shape));
        m.values = f.read<float>("/by_user/values", &shape);
        if (shape.size() != 1) throw Error(path + ": /by_user/values: must be 1-D, is " + h5::shape_text(shape));
        validate_csr(path, "/by_user", m, threads);
        if (r.feedback == Feedback::implicit_counts) {
            const float* v = m.values.data();
            const std::int64_t n = m.nnz();
            std::int64_t negatives = 0;
#pragma omp parallel for schedule(static) reduction(+ : negatives) if (threads)
            for (std::int64_t e = 0; e < n; ++e) negatives += v[e] < 0;
            if (negatives)
                for (std::int64_t e = 0; e < n; ++e)
                    if (v[e] < 0) throw Error(path + ": /by_user/values: entry " + std::to_string(e) + " is a negative count");
        }
        if (item_side) r.by_item = transpose(m);
        return r;
    } catch (const batchsolve::io::FileError& e) {
        throw Error(e.what());
    }
}

RatingsShape read_ratings_shape(const std::string& path) {
    try {
        h5::File f = h5::File::open(path);
        if (!f.has_attribute("/", "format") || f.string_attribute("/", "format") != ratings_format_tag)
            throw Error(path + ": /: not an ALS ratings file");
        RatingsShape shape;
        shape.users = f.int_attribute("/", "users"), shape.items = f.int_attribute("/", "items");
        shape.feedback = parse_feedback(f.string_attribute("/", "feedback"));
        return shape;
    } catch (const batchsolve::io::FileError& e) {
        throw Error(e.what());
    }
}

// ---- split ---------------------------------------------------------------------------------------

std::pair<Ratings, Ratings> split(const Ratings& all, const SplitOptions& o) {
    if (o.mode == SplitMode::random && !(o.test_fraction > 0 && o.test_fraction < 1))
        throw Error("--test-fraction must be in (0, 1)");
    if (o.mode == SplitMode::leave_k_out && o.leave_k < 1) throw Error("--leave-k must be >= 1");
    std::mt19937_64 rng(o.seed);
    std::vector<std::int32_t> tu, ti, su, si;
    std::vector<float> tv, sv;
    const Csr& m = all.by_user;
    std::vector<std::int64_t> perm;
    for (std::int64_t u = 0; u < m.rows; ++u) {
        const std::int64_t b = m.indptr[u], n = m.row_length(u);
        std::vector<bool> to_test(static_cast<std::size_t>(n), false);
        if (o.mode == SplitMode::random) {
            std::uniform_real_distribution<double> uni(0, 1);
            for (std::int64_t j = 0; j < n; ++j) to_test[j] = uni(rng) < o.test_fraction;
        } else if (n > o.leave_k) {
            perm.resize(std::size_t(n));
            std::iota(perm.begin(), perm.end(), std::int64_t(0));
            std::shuffle(perm.begin(), perm.end(), rng);
            for (int j = 0; j < o.leave_k; ++j) to_test[std::size_t(perm[j])] = true;
        }
        for (std::int64_t j = 0; j < n; ++j) {
            auto& U = to_test[j] ? su : tu;
            auto& I = to_test[j] ? si : ti;
            auto& V = to_test[j] ? sv : tv;
            U.push_back(std::int32_t(u)), I.push_back(m.indices[b + j]), V.push_back(m.values[b + j]);
        }
    }
    std::ostringstream prov;
    prov << " | split " << (o.mode == SplitMode::random ? "random test_fraction=" + std::to_string(o.test_fraction)
                                                         : "leave-k-out k=" + std::to_string(o.leave_k))
         << " seed=" << o.seed;
    Ratings train = from_triplets(all.feedback, all.user_ids, all.item_ids, tu, ti, tv, all.provenance + prov.str() + " (train)");
    Ratings test = from_triplets(all.feedback, all.user_ids, all.item_ids, su, si, sv, all.provenance + prov.str() + " (test)");
    return {std::move(train), std::move(test)};
}

// ---- generator -----------------------------------------------------------------------------------

Ratings generate(const GenerateOptions& o) {
    if (o.users < 1 || o.items < 1 || o.users > max_side || o.items > max_side)
        throw Error("--users and --items must be in [1, 2^31 - 1]");
    if (o.interactions < 1 || double(o.interactions) > 0.5 * double(o.users) * double(o.items))
        throw Error("--interactions must be in [1, users * items / 2]");
    if (o.rank < 1 || o.rank > 1024) throw Error("--rank must be in [1, 1024]");
    if (!(o.zipf >= 0) || !(o.noise >= 0)) throw Error("--zipf and --noise must be >= 0");
    const std::int64_t U = o.users, I = o.items, r = o.rank;

    // Planted factors, N(0, 1/r) entries so that an affinity p_u . q_i has variance about 1.
    std::vector<float> P(static_cast<std::size_t>(U * r)), Q(std::size_t(I * r));
    {
        std::mt19937_64 rng(o.seed);
        std::normal_distribution<float> g(0.f, float(1 / std::sqrt(double(r))));
        for (auto& v : Q) v = g(rng);
    }
#pragma omp parallel for schedule(static)
    for (std::int64_t u = 0; u < U; ++u) {
        std::mt19937_64 rng(o.seed * 0x9E3779B97F4A7C15ull + std::uint64_t(u) + 1);
        std::normal_distribution<float> g(0.f, float(1 / std::sqrt(double(r))));
        for (std::int64_t j = 0; j < r; ++j) P[std::size_t(u * r + j)] = g(rng);
    }
    // Item popularity: the cumulative Zipf weights over a random order of the items (so that item
    // index and popularity are unrelated), searched by bisection.
    std::vector<std::int32_t> by_popularity(static_cast<std::size_t>(I));
    std::iota(by_popularity.begin(), by_popularity.end(), 0);
    {
        std::mt19937_64 rng(o.seed + 17);
        std::shuffle(by_popularity.begin(), by_popularity.end(), rng);
    }
    std::vector<double> cdf(static_cast<std::size_t>(I));
    double total = 0;
    for (std::int64_t j = 0; j < I; ++j) cdf[std::size_t(j)] = total += std::pow(double(j + 1), -o.zipf);
    for (auto& c : cdf) c /= total;
    // Per-user counts: log-normal weights (sigma 1) scaled to the requested total, clamped to
    // [min(5, items), items / 2].
    std::vector<std::int64_t> count(static_cast<std::size_t>(U));
    {
        std::mt19937_64 rng(o.seed + 29);
        std::lognormal_distribution<double> ln(0, 1);
        std::vector<double> w(static_cast<std::size_t>(U));
        double sum = 0;
        for (auto& x : w) sum += x = ln(rng);
        const std::int64_t lo = std::min<std::int64_t>(5, I), hi = std::max<std::int64_t>(lo, I / 2);
        for (std::int64_t u = 0; u < U; ++u)
            count[std::size_t(u)] = std::clamp<std::int64_t>(std::llround(w[std::size_t(u)] / sum * double(o.interactions)), lo, hi);
    }
    std::vector<std::int64_t> offset(static_cast<std::size_t>(U + 1), 0);
    for (std::int64_t u = 0; u < U; ++u) offset[std::size_t(u + 1)] = offset[std::size_t(u)] + count[std::size_t(u)];
    const std::int64_t nnz = offset.back();
    std::vector<std::int32_t> items(static_cast<std::size_t>(nnz));
    std::vector<float> values(static_cast<std::size_t>(nnz));
#pragma omp parallel for schedule(dynamic, 256)
    for (std::int64_t u = 0; u < U; ++u) {
        std::mt19937_64 rng(o.seed * 0xD1B54A32D192ED03ull + std::uint64_t(u) * 0x2545F4914F6CDD1Dull + 7);
        std::uniform_real_distribution<double> uni(0, 1);
        std::normal_distribution<double> noise(0, o.noise);
        std::vector<std::pair<std::int32_t, float>> chosen;
        // Which items this user has: a bitmap per thread, cleared after each user (only its entries).
        thread_local std::vector<char> taken;
        if (std::int64_t(taken.size()) != I) taken.assign(std::size_t(I), 0);
        const std::int64_t want = count[std::size_t(u)];
        const float* p = &P[std::size_t(u * r)];
        std::int64_t attempts = 0;
        while (std::int64_t(chosen.size()) < want) {
            ++attempts;
            // Popular items first; after many attempts fall back to uniform picks so that a user who
            // wants many items always finishes.
            std::int32_t item;
            if (attempts < 50 * want) {
                const double x = uni(rng);
                const std::size_t pos = std::size_t(std::lower_bound(cdf.begin(), cdf.end(), x) - cdf.begin());
                item = by_popularity[std::min(pos, std::size_t(I - 1))];
            } else {
                item = std::int32_t(std::min<std::int64_t>(I - 1, std::int64_t(uni(rng) * double(I))));
            }
            const float* q = &Q[std::size_t(item) * std::size_t(r)];
            double a = 0;
            for (std::int64_t j = 0; j < r; ++j) a += double(p[j]) * q[j];
            const double score = a + noise(rng);
            // Keep an item with probability sigmoid(8 (score - 0.5)): users mostly take what they like, so that
            // the planted signal, not popularity alone, decides what a user has.
            if (attempts < 50 * want && uni(rng) > 1 / (1 + std::exp(-8 * (score - 0.5)))) continue;
            if (taken[std::size_t(item)]) continue;
            taken[std::size_t(item)] = 1;
            float value;
            if (o.feedback == Feedback::implicit_counts) {
                // Counts grow with the affinity: 1 + a geometric number with mean exp(score).
                const double mean = std::exp(std::min(score, 5.0));
                value = float(1 + std::floor(-std::log(1 - uni(rng)) * mean));
            } else {
                value = float(std::clamp(std::round(3 + 1.2 * score), 1.0, 5.0));
            }
            chosen.emplace_back(item, value);
        }
        std::sort(chosen.begin(), chosen.end());
        for (const auto& c : chosen) taken[std::size_t(c.first)] = 0;
        for (std::int64_t j = 0; j < want; ++j) {
            items[std::size_t(offset[std::size_t(u)] + j)] = chosen[std::size_t(j)].first;
            values[std::size_t(offset[std::size_t(u)] + j)] = chosen[std::size_t(j)].second;
        }
    }
    Ratings out;
    out.feedback = o.feedback;
    out.by_user.rows = U, out.by_user.cols = I;
    out.by_user.indptr = std::move(offset);
    out.by_user.indices = std::move(items);
    out.by_user.values = std::move(values);
    out.by_item = transpose(out.by_user);
    out.user_ids.resize(std::size_t(U));
    out.item_ids.resize(std::size_t(I));
    for (std::int64_t u = 0; u < U; ++u) out.user_ids[std::size_t(u)] = "u" + std::to_string(u);
    for (std::int64_t i = 0; i < I; ++i) out.item_ids[std::size_t(i)] = "i" + std::to_string(i);
    std::ostringstream prov;
    prov << "generate users=" << U << " items=" << I << " interactions=" << nnz << " rank=" << r << " zipf=" << o.zipf
         << " noise=" << o.noise << " feedback=" << to_string(o.feedback) << " seed=" << o.seed;
    out.provenance = prov.str();
    return out;
}

}  // namespace als
