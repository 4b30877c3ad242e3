// Rating sets: CSR matrices with 64-bit offsets, the text importers, the HDF5 ratings file, the
// train/test split and the synthetic generator of the ALS recommender.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace als {

// Any error a user can fix (bad input file, bad option value): main prints what() and exits non-zero.
struct Error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// A rows x cols sparse matrix in compressed rows. Offsets are 64-bit so that 2^31+ interactions
// index correctly; column indices are 32-bit (a side has fewer than 2^31 members, checked on import).
struct Csr {
    std::int64_t rows = 0, cols = 0;
    std::vector<std::int64_t> indptr{0};  // rows + 1 entries, indptr[0] = 0, non-decreasing
    std::vector<std::int32_t> indices;    // column of each entry, sorted within a row, no repeats
    std::vector<float> values;
    std::int64_t nnz() const { return std::int64_t(indices.size()); }
    std::int64_t row_length(std::int64_t r) const { return indptr[r + 1] - indptr[r]; }
};

// The transpose (cols x rows), rows sorted; O(nnz).
Csr transpose(const Csr& m);

enum class Feedback { explicit_ratings, implicit_counts };
const char* to_string(Feedback f);
Feedback parse_feedback(const std::string& text);  // "explicit" | "implicit"

// A rating set: interactions by user and by item (the same entries), and the original ids of both
// sides so that models and recommendations speak the ids of the source file.
struct Ratings {
    Feedback feedback = Feedback::explicit_ratings;
    Csr by_user;  // users x items
    Csr by_item;  // items x users
    std::vector<std::string> user_ids, item_ids;
    std::string provenance;  // where the data came from (importer, file, options), one line
    std::int64_t users() const { return by_user.rows; }
    std::int64_t items() const { return by_user.cols; }
    std::int64_t nnz() const { return by_user.nnz(); }
};

// Builds both CSRs from triplets (user and item indices into the id lists). Duplicate (user, item)
// pairs must have been merged already (a repeat throws).
Ratings from_triplets(Feedback feedback, std::vector<std::string> user_ids, std::vector<std::string> item_ids,
                      const std::vector<std::int32_t>& users, const std::vector<std::int32_t>& items,
                      const std::vector<float>& values, std::string provenance);

// ---- text import ---------------------------------------------------------------------------------

// How a repeated (user, item) pair is resolved: the sum of the values (play counts), the last line's
// value (a re-rating replaces the earlier one), or an error naming both lines.
enum class Duplicates { sum, last, error };
Duplicates parse_duplicates(const std::string& text);
const char* to_string(Duplicates d);

struct TextFormat {
    std::string name;          // for messages and provenance
    std::string delimiter;     // "," "\t" "::" or any string; " " means runs of blanks
    bool header = false;       // the first line names the columns and is skipped
    int user_column = 0, item_column = 1, rating_column = 2;  // 0-based; rating -1: every line counts 1
    Feedback feedback = Feedback::explicit_ratings;
    Duplicates duplicates = Duplicates::last;
};

// Named formats: movielens-csv (ratings.csv, header, ','), movielens-100k (u.data, tab),
// movielens-dat (ratings.dat, '::'), lastfm (user_artists.dat, tab, header, implicit counts, sum),
// csv and tsv (generic: columns and header from the caller).
TextFormat named_format(const std::string& name);

struct ImportReport {
    std::int64_t lines = 0, bad_lines = 0, duplicates_merged = 0;
    std::string first_bad;  // "<file>:<line>: <reason>" of the first skipped line
};

// Reads one text file. A malformed line (too few columns, an empty id, a non-numeric or non-finite
// rating, a negative implicit count) throws Error "<file>:<line>: <reason>" unless skip_bad, which
// counts it instead. An input without a single rating is an error. Ids are kept as text, numbered in
// order of first appearance.
Ratings import_text(const std::string& path, const TextFormat& format, bool skip_bad, ImportReport* report = nullptr);

// ---- HDF5 ratings file (schema in the README) ---------------------------------------------------

void write_ratings(const std::string& path, const Ratings& r, bool force, const std::vector<std::string>& inputs,
                   const std::string& command_line);
// Reads and validates a ratings file (offsets, index ranges, sorted rows, finite values, id counts);
// by_item is rebuilt from by_user rather than trusted. Errors name the file and dataset.
// item_side false: by_item is left empty (a read that only checks the file, as als's child probe).
// threads false: no OpenMP team, as in a child forked after the parent ran one (libgomp's threads
// are not in the child: a parallel region there waits for them forever).
Ratings read_ratings(const std::string& path, bool item_side = true, bool threads = true);
// What als's child probe reads (h5::probe_in_child): all that read_ratings parses (attributes, ids,
// the by_user datasets' headers), and the data of a dataset only where it is not stored plainly
// (chunked or filtered: h5::File::stored_plainly); the parent's read_ratings then checks the values.
// The files als writes store their arrays plainly, so the probe of 20 M ratings reads ids only.
void probe_ratings(const std::string& path);
// The users, items and feedback a ratings file's attributes announce, without reading its arrays (for
// set-up that can start before the read); nothing checked beyond the format tag. Error where absent.
struct RatingsShape {
    std::int64_t users = 0, items = 0;
    Feedback feedback = Feedback::implicit_counts;
};
RatingsShape read_ratings_shape(const std::string& path);

// ---- split ---------------------------------------------------------------------------------------

enum class SplitMode { random, leave_k_out };
struct SplitOptions {
    SplitMode mode = SplitMode::random;
    double test_fraction = 0.2;  // random: each interaction goes to test with this probability
    int leave_k = 1;             // leave_k_out: k interactions per user (users with <= k keep all in train)
    std::uint64_t seed = 0;
};
// Train and test share the id lists (and so the index spaces) of the input.
std::pair<Ratings, Ratings> split(const Ratings& all, const SplitOptions& options);

// ---- synthetic generator -------------------------------------------------------------------------

struct GenerateOptions {
    std::int64_t users = 1000, items = 500, interactions = 20000;
    int rank = 16;             // rank of the planted signal
    double zipf = 1.0;         // item popularity ~ 1 / (rank + 1)^zipf
    double noise = 0.3;        // standard deviation of the noise added to each draw's planted affinity
    Feedback feedback = Feedback::implicit_counts;
    std::uint64_t seed = 1;
};
// Users get a log-normal number of interactions (at least min(5, items)), items are drawn by
// popularity and kept when their planted affinity with the user (plus noise) is high, so that a
// low-rank model can learn who takes what. Implicit values are counts >= 1 growing with the affinity;
// explicit values are 1..5 stars. Deterministic in the seed, whatever the thread count.
Ratings generate(const GenerateOptions& options);

}  // namespace als
