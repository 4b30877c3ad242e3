// Mesh readers (PLY, STL, Gmsh), sphere generators and the surface checks of mesh.hpp.
#include "mesh.hpp"

#include "batchsolve_io/output.hpp"

#ifndef BEM_WITHOUT_GMSH
#include <gmsh.h>
#endif
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <sstream>
#include <unordered_map>

namespace bem {
namespace {

[[noreturn]] void fail(const std::string& file, const std::string& where, const std::string& reason) {
    throw MeshError(file + ": " + where + ": " + reason);
}

std::string read_whole_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) fail(path, "open", "cannot open the file");
    in.seekg(0, std::ios::end);
    const std::streamoff size = in.tellg();
    if (size < 0) fail(path, "open", "cannot determine the file size");
    in.seekg(0);
    std::string bytes(std::size_t(size), '\0');
    in.read(bytes.data(), size);
    if (!in) fail(path, "read", "short read");
    return bytes;
}

// File content quoted in a message: at most 40 characters, non-printable bytes as \xNN.
std::string quoted(const std::string& text) {
    std::string out;
    for (std::size_t i = 0; i < text.size() && i < 40; ++i) {
        const unsigned char c = static_cast<unsigned char>(text[i]);
        if (c >= 32 && c < 127) {
            out += char(c);
        } else {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02x", c);
            out += buf;
        }
    }
    return "'" + out + (text.size() > 40 ? "...'" : "'");
}

std::string lower(std::string s) {
    for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

std::array<double, 3> sub(const std::array<double, 3>& a, const std::array<double, 3>& b) {
    return {a[0] - b[0], a[1] - b[1], a[2] - b[2]};
}
std::array<double, 3> cross(const std::array<double, 3>& a, const std::array<double, 3>& b) {
    return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
double dot(const std::array<double, 3>& a, const std::array<double, 3>& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
double norm(const std::array<double, 3>& a) { return std::sqrt(dot(a, a)); }

// ---- PLY -------------------------------------------------------------------------------------

enum class PlyType { i8, u8, i16, u16, i32, u32, f32, f64 };

bool parse_ply_type(const std::string& name, PlyType& type) {
    static const std::map<std::string, PlyType> names = {
        {"char", PlyType::i8},    {"int8", PlyType::i8},     {"uchar", PlyType::u8},   {"uint8", PlyType::u8},
        {"short", PlyType::i16},  {"int16", PlyType::i16},   {"ushort", PlyType::u16}, {"uint16", PlyType::u16},
        {"int", PlyType::i32},    {"int32", PlyType::i32},   {"uint", PlyType::u32},   {"uint32", PlyType::u32},
        {"float", PlyType::f32},  {"float32", PlyType::f32}, {"double", PlyType::f64}, {"float64", PlyType::f64}};
    auto it = names.find(name);
    if (it == names.end()) return false;
    type = it->second;
    return true;
}

std::size_t ply_size(PlyType t) {
    switch (t) {
        case PlyType::i8: case PlyType::u8: return 1;
        case PlyType::i16: case PlyType::u16: return 2;
        case PlyType::i32: case PlyType::u32: case PlyType::f32: return 4;
        case PlyType::f64: return 8;
    }
    return 0;
}

struct PlyProperty {
    std::string name;
    bool is_list = false;
    PlyType count_type = PlyType::u8, type = PlyType::f32;
};
struct PlyElement {
    std::string name;
    std::uint64_t count = 0;
    std::vector<PlyProperty> properties;
};

// Reads values from the body of a PLY file, binary (either endianness) or ASCII.
class PlyBody {
public:
    PlyBody(const std::string& file, const std::string& bytes, std::size_t pos, int format)
        : file_(file), bytes_(bytes), pos_(pos), format_(format) {}

    double value(PlyType t, const std::string& where) {
        if (format_ == 0) return ascii_value(where);
        const std::size_t n = ply_size(t);
        if (pos_ + n > bytes_.size()) fail(file_, where, "file ends early (truncated binary PLY body)");
        unsigned char raw[8];
        std::memcpy(raw, bytes_.data() + pos_, n);
        pos_ += n;
        if (format_ == 2) std::reverse(raw, raw + n);  // big endian on a little-endian host
        switch (t) {
            case PlyType::i8: { std::int8_t v; std::memcpy(&v, raw, 1); return v; }
            case PlyType::u8: return raw[0];
            case PlyType::i16: { std::int16_t v; std::memcpy(&v, raw, 2); return v; }
            case PlyType::u16: { std::uint16_t v; std::memcpy(&v, raw, 2); return v; }
            case PlyType::i32: { std::int32_t v; std::memcpy(&v, raw, 4); return v; }
            case PlyType::u32: { std::uint32_t v; std::memcpy(&v, raw, 4); return v; }
            case PlyType::f32: { float v; std::memcpy(&v, raw, 4); return v; }
            case PlyType::f64: { double v; std::memcpy(&v, raw, 8); return v; }
        }
        return 0;
    }
    std::size_t position() const { return pos_; }

private:
    double ascii_value(const std::string& where) {
        while (pos_ < bytes_.size() && std::isspace(static_cast<unsigned char>(bytes_[pos_]))) ++pos_;
        if (pos_ >= bytes_.size()) fail(file_, where, "file ends early (truncated ASCII PLY body)");
        const std::size_t start = pos_;
        while (pos_ < bytes_.size() && !std::isspace(static_cast<unsigned char>(bytes_[pos_]))) ++pos_;
        const std::string token = bytes_.substr(start, pos_ - start);
        char* end = nullptr;
        const double v = std::strtod(token.c_str(), &end);
        if (end != token.c_str() + token.size()) fail(file_, where, "not a number: " + quoted(token));
        return v;
    }
    const std::string& file_;
    const std::string& bytes_;
    std::size_t pos_;
    int format_;  // 0 ascii, 1 binary little endian, 2 binary big endian
};

std::int32_t checked_index(double v, std::size_t vertex_count, const std::string& file, const std::string& where) {
    if (!(v >= 0) || v >= double(vertex_count) || v != std::floor(v)) {
        std::ostringstream text;
        text << "vertex index " << v << " outside 0.." << vertex_count - 1;
        fail(file, where, text.str());
    }
    return std::int32_t(v);
}

// ---- vertex welding (STL) ---------------------------------------------------------------------

struct VertexKey {
    double x, y, z;
    bool operator==(const VertexKey& o) const { return x == o.x && y == o.y && z == o.z; }
};
struct VertexKeyHash {
    std::size_t operator()(const VertexKey& k) const {
        std::size_t h = std::hash<double>()(k.x);
        h ^= std::hash<double>()(k.y) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
        h ^= std::hash<double>()(k.z) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
        return h;
    }
};

class Welder {
public:
    std::int32_t add(Mesh& mesh, double x, double y, double z) {
        VertexKey key{x, y, z};
        auto [it, inserted] = index_.emplace(key, std::int32_t(mesh.vertices.size()));
        if (inserted) mesh.vertices.push_back({x, y, z});
        return it->second;
    }

private:
    std::unordered_map<VertexKey, std::int32_t, VertexKeyHash> index_;
};

}  // namespace

// =================================================================================================

Mesh read_ply(const std::string& path) {
    const std::string bytes = read_whole_file(path);
    std::size_t header_end = bytes.find("end_header");
    if (bytes.compare(0, 3, "ply") != 0) fail(path, "header line 1", "not a PLY file (no 'ply' magic)");
    if (header_end == std::string::npos) fail(path, "header", "no 'end_header' line");
    std::size_t body = bytes.find('\n', header_end);
    if (body == std::string::npos) fail(path, "header", "nothing after 'end_header'");
    ++body;

    std::istringstream header(bytes.substr(0, header_end));
    std::string line;
    int format = -1, line_no = 0;
    std::vector<PlyElement> elements;
    while (std::getline(header, line)) {
        ++line_no;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        std::istringstream words(line);
        std::string word;
        words >> word;
        const std::string where = "header line " + std::to_string(line_no);
        if (word == "format") {
            std::string name, version;
            words >> name >> version;
            if (name == "ascii") format = 0;
            else if (name == "binary_little_endian") format = 1;
            else if (name == "binary_big_endian") format = 2;
            else fail(path, where, "unknown format " + quoted(name));
        } else if (word == "element") {
            PlyElement e;
            std::string count;
            words >> e.name >> count;
            char* end = nullptr;
            e.count = std::strtoull(count.c_str(), &end, 10);
            if (count.empty() || *end != '\0' || count[0] == '-') fail(path, where, "bad element count " + quoted(count));
            // Every element takes at least one byte (binary) or two (ASCII): a count the file cannot
            // hold is refused before anything is allocated.
            if (e.count > bytes.size()) fail(path, where, "element count " + quoted(count) + " exceeds what the file can hold");
            elements.push_back(e);
        } else if (word == "property") {
            if (elements.empty()) fail(path, where, "property before any element");
            PlyProperty p;
            std::string type;
            words >> type;
            if (type == "list") {
                std::string ct, it;
                words >> ct >> it >> p.name;
                p.is_list = true;
                if (!parse_ply_type(ct, p.count_type) || !parse_ply_type(it, p.type))
                    fail(path, where, "unknown list types " + quoted(ct + " " + it));
            } else {
                words >> p.name;
                if (!parse_ply_type(type, p.type)) fail(path, where, "unknown property type " + quoted(type));
            }
            elements.back().properties.push_back(p);
        } else if (word == "ply" || word == "comment" || word == "obj_info" || word.empty()) {
        } else {
            fail(path, where, "unexpected keyword " + quoted(word));
        }
    }
    if (format < 0) fail(path, "header", "no 'format' line");

    Mesh mesh;
    mesh.source = path;
    PlyBody in(path, bytes, body, format);
    bool have_vertices = false;
    for (const PlyElement& e : elements) {
        if (e.name == "vertex") {
            int ix = -1, iy = -1, iz = -1;
            for (std::size_t p = 0; p < e.properties.size(); ++p) {
                if (e.properties[p].name == "x") ix = int(p);
                if (e.properties[p].name == "y") iy = int(p);
                if (e.properties[p].name == "z") iz = int(p);
            }
            if (ix < 0 || iy < 0 || iz < 0) fail(path, "element vertex", "needs properties x, y and z");
            if (e.count > std::uint64_t(std::numeric_limits<std::int32_t>::max()))
                fail(path, "element vertex", "more than 2^31 vertices");
            mesh.vertices.resize(e.count);
            for (std::uint64_t v = 0; v < e.count; ++v) {
                const std::string where = "vertex " + std::to_string(v);
                for (std::size_t p = 0; p < e.properties.size(); ++p) {
                    const PlyProperty& prop = e.properties[p];
                    if (prop.is_list) {
                        const double n = in.value(prop.count_type, where);
                        if (!(n >= 0) || n > double(bytes.size())) fail(path, where, "bad list length");
                        for (std::uint64_t i = 0; i < std::uint64_t(n); ++i) in.value(prop.type, where);
                        continue;
                    }
                    const double value = in.value(prop.type, where);
                    if (int(p) == ix || int(p) == iy || int(p) == iz) {
                        if (!std::isfinite(value)) fail(path, where, "coordinate is not finite");
                        mesh.vertices[v][int(p) == ix ? 0 : int(p) == iy ? 1 : 2] = value;
                    }
                }
            }
            have_vertices = true;
        } else if (e.name == "face") {
            if (!have_vertices) fail(path, "element face", "faces before the vertex element");
            int list = -1;
            for (std::size_t p = 0; p < e.properties.size(); ++p)
                if (e.properties[p].is_list && (e.properties[p].name == "vertex_indices" || e.properties[p].name == "vertex_index")) list = int(p);
            if (list < 0) fail(path, "element face", "needs a list property vertex_indices");
            mesh.triangles.reserve(std::min<std::uint64_t>(e.count, bytes.size() / 4));
            for (std::uint64_t f = 0; f < e.count; ++f) {
                const std::string where = "face " + std::to_string(f);
                for (std::size_t p = 0; p < e.properties.size(); ++p) {
                    const PlyProperty& prop = e.properties[p];
                    if (!prop.is_list) { in.value(prop.type, where); continue; }
                    const double n = in.value(prop.count_type, where);
                    if (!(n >= 0) || n > 1e6) fail(path, where, "bad list length");
                    std::vector<std::int32_t> idx;
                    for (std::uint64_t i = 0; i < std::uint64_t(n); ++i) {
                        const double v = in.value(prop.type, where);
                        if (int(p) == list) idx.push_back(checked_index(v, mesh.vertices.size(), path, where));
                    }
                    if (int(p) != list) continue;
                    if (idx.size() < 3) fail(path, where, "a face needs at least 3 vertices, has " + std::to_string(idx.size()));
                    for (std::size_t i = 1; i + 1 < idx.size(); ++i) mesh.triangles.push_back({idx[0], idx[i], idx[i + 1]});
                }
            }
        } else {
            for (std::uint64_t r = 0; r < e.count; ++r)
                for (const PlyProperty& prop : e.properties) {
                    const std::string where = "element " + e.name;
                    if (!prop.is_list) { in.value(prop.type, where); continue; }
                    const double n = in.value(prop.count_type, where);
                    if (!(n >= 0) || n > double(bytes.size())) fail(path, where, "bad list length");
                    for (std::uint64_t i = 0; i < std::uint64_t(n); ++i) in.value(prop.type, where);
                }
        }
    }
    if (mesh.vertices.empty() || mesh.triangles.empty()) fail(path, "elements", "no vertices or no faces");
    return mesh;
}

Mesh read_stl(const std::string& path) {
    const std::string bytes = read_whole_file(path);
    Mesh mesh;
    mesh.source = path;
    Welder welder;
    bool binary = false;
    std::uint32_t count = 0;
    if (bytes.size() >= 84) {
        std::memcpy(&count, bytes.data() + 80, 4);
        binary = bytes.size() == 84 + 50 * std::uint64_t(count);
    }
    if (binary) {
        mesh.triangles.reserve(count);
        for (std::uint32_t t = 0; t < count; ++t) {
            const char* rec = bytes.data() + 84 + 50 * std::size_t(t);
            std::array<std::int32_t, 3> tri{};
            for (int v = 0; v < 3; ++v) {
                float xyz[3];
                std::memcpy(xyz, rec + 12 + 12 * v, 12);
                for (float c : xyz)
                    if (!std::isfinite(c)) fail(path, "facet " + std::to_string(t), "coordinate is not finite");
                tri[v] = welder.add(mesh, xyz[0], xyz[1], xyz[2]);
            }
            mesh.triangles.push_back(tri);
        }
    } else {
        if (lower(bytes.substr(0, 5)) != "solid")
            fail(path, "header", "neither binary STL (size != 84 + 50 x facet count) nor ASCII STL (no 'solid')");
        std::istringstream in(bytes);
        std::string line;
        int line_no = 0;
        std::vector<std::int32_t> loop;
        while (std::getline(in, line)) {
            ++line_no;
            std::istringstream words(line);
            std::string word;
            words >> word;
            word = lower(word);
            const std::string where = "line " + std::to_string(line_no);
            if (word == "vertex") {
                double x, y, z;
                if (!(words >> x >> y >> z) || !std::isfinite(x) || !std::isfinite(y) || !std::isfinite(z))
                    fail(path, where, "a vertex needs three finite coordinates");
                loop.push_back(welder.add(mesh, x, y, z));
            } else if (word == "endloop") {
                if (loop.size() != 3) fail(path, where, "a facet needs 3 vertices, has " + std::to_string(loop.size()));
                mesh.triangles.push_back({loop[0], loop[1], loop[2]});
                loop.clear();
            }
        }
    }
    if (mesh.triangles.empty()) fail(path, "facets", "no facets");
    return mesh;
}

#ifndef BEM_WITHOUT_GMSH
namespace {
// Gmsh keeps global state: one user at a time, initialised once without reading config files.
std::mutex gmsh_mutex;
struct GmshSession {
    GmshSession() {
        gmsh::initialize(0, nullptr, false);
        gmsh::option::setNumber("General.Terminal", 0);
        gmsh::option::setNumber("General.AbortOnError", 0);
        gmsh::option::setNumber("General.Verbosity", 1);  // errors only, into the logger (Terminal is off)
    }
    ~GmshSession() { gmsh::finalize(); }
};

Mesh mesh_from_gmsh_model(const std::string& source) {
    std::vector<std::size_t> node_tags;
    std::vector<double> coords, parametric;
    gmsh::model::mesh::getNodes(node_tags, coords, parametric, -1, -1, false, false);
    std::vector<std::size_t> element_tags, element_nodes;
    gmsh::model::mesh::getElementsByType(2, element_tags, element_nodes);  // 2: 3-node triangle
    Mesh mesh;
    mesh.source = source;
    std::unordered_map<std::size_t, std::int32_t> index;
    for (std::size_t i = 0; i < node_tags.size(); ++i) {
        index.emplace(node_tags[i], std::int32_t(mesh.vertices.size()));
        mesh.vertices.push_back({coords[3 * i], coords[3 * i + 1], coords[3 * i + 2]});
    }
    for (std::size_t e = 0; e < element_tags.size(); ++e) {
        std::array<std::int32_t, 3> tri{};
        for (int v = 0; v < 3; ++v) {
            auto it = index.find(element_nodes[3 * e + v]);
            if (it == index.end()) fail(source, "element " + std::to_string(element_tags[e]), "refers to a missing node");
            tri[v] = it->second;
        }
        mesh.triangles.push_back(tri);
    }
    if (mesh.triangles.empty()) fail(source, "elements", "no 3-node triangles (Gmsh element type 2)");
    return mesh;
}
}  // namespace

namespace {

Mesh read_msh_in_this_process(const std::string& path) {
    std::lock_guard<std::mutex> lock(gmsh_mutex);
    GmshSession session;
    // Gmsh reports most read errors through its logger rather than by throwing: collect them.
    gmsh::logger::start();
    try {
        gmsh::open(path);
    } catch (const std::exception& e) {
        gmsh::logger::stop();
        fail(path, "gmsh", e.what());
    } catch (...) {
        gmsh::logger::stop();
        fail(path, "gmsh", "Gmsh could not read the file");
    }
    std::vector<std::string> log;
    gmsh::logger::get(log);
    gmsh::logger::stop();
    for (const std::string& line : log)
        if (line.rfind("Error: ", 0) == 0) fail(path, "gmsh", line.substr(7));
    return mesh_from_gmsh_model(path);
}

bool write_all(int fd, const void* data, std::size_t bytes) {
    const char* p = static_cast<const char*>(data);
    while (bytes > 0) {
        const ssize_t w = ::write(fd, p, bytes);
        if (w <= 0) return false;
        p += w;
        bytes -= std::size_t(w);
    }
    return true;
}

}  // namespace

// Gmsh 4.8 crashes (SIGSEGV) on some malformed .msh files (found by mutating the seed corpus), so
// the file is read in a child process that sends the mesh back through a pipe: a crash there is a
// one-line error here, never the end of the run.
Mesh read_msh(const std::string& path) {
    {
        std::ifstream probe(path);
        if (!probe) fail(path, "open", "cannot open the file");
        std::string first;
        std::getline(probe, first);
        if (first.rfind("$MeshFormat", 0) != 0) fail(path, "line 1", "not a Gmsh .msh file (no $MeshFormat)");
    }
    int fds[2];
    if (::pipe(fds) != 0) fail(path, "gmsh", "cannot create a pipe for the reader process");
    std::fflush(nullptr);
    const pid_t child = ::fork();
    if (child < 0) {
        ::close(fds[0]);
        ::close(fds[1]);
        fail(path, "gmsh", "cannot start the reader process");
    }
    if (child == 0) {
        ::close(fds[0]);
        std::uint8_t status = 0;
        std::string message;
        Mesh mesh;
        try {
            mesh = read_msh_in_this_process(path);
        } catch (const std::exception& e) {
            status = 1;
            message = e.what();
        }
        bool ok = write_all(fds[1], &status, 1);
        if (status) {
            const std::uint64_t len = message.size();
            ok = ok && write_all(fds[1], &len, 8) && write_all(fds[1], message.data(), message.size());
        } else {
            const std::uint64_t counts[2] = {mesh.vertices.size(), mesh.triangles.size()};
            ok = ok && write_all(fds[1], counts, 16) && write_all(fds[1], mesh.vertices.data(), mesh.vertices.size() * sizeof(mesh.vertices[0])) &&
                 write_all(fds[1], mesh.triangles.data(), mesh.triangles.size() * sizeof(mesh.triangles[0]));
        }
        ::close(fds[1]);
        ::_exit(ok ? 0 : 3);
    }
    ::close(fds[1]);
    std::string bytes;
    char buffer[1 << 16];
    for (;;) {
        const ssize_t r = ::read(fds[0], buffer, sizeof buffer);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        bytes.append(buffer, std::size_t(r));
    }
    ::close(fds[0]);
    int wstatus = 0;
    while (::waitpid(child, &wstatus, 0) < 0 && errno == EINTR) {
    }
    if (WIFSIGNALED(wstatus))
        fail(path, "gmsh", "the Gmsh reader crashed (signal " + std::to_string(WTERMSIG(wstatus)) + "): malformed file");
    if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0 || bytes.empty()) fail(path, "gmsh", "the Gmsh reader process failed");
    std::size_t at = 1;
    auto take = [&](void* out, std::size_t n) {
        if (at + n > bytes.size()) fail(path, "gmsh", "short reply from the reader process");
        std::memcpy(out, bytes.data() + at, n);
        at += n;
    };
    if (bytes[0] != 0) {
        std::uint64_t len = 0;
        take(&len, 8);
        if (len > bytes.size()) fail(path, "gmsh", "short reply from the reader process");
        throw MeshError(bytes.substr(at, len));
    }
    std::uint64_t counts[2];
    take(counts, 16);
    if (counts[0] > bytes.size() || counts[1] > bytes.size()) fail(path, "gmsh", "short reply from the reader process");
    Mesh mesh;
    mesh.source = path;
    mesh.vertices.resize(counts[0]);
    mesh.triangles.resize(counts[1]);
    take(mesh.vertices.data(), counts[0] * sizeof(mesh.vertices[0]));
    take(mesh.triangles.data(), counts[1] * sizeof(mesh.triangles[0]));
    return mesh;
}

Mesh make_gmsh_sphere(double h, double radius) {
    if (!(h > 0) || !(radius > 0)) throw MeshError("gmsh sphere: h and radius must be positive");
    std::lock_guard<std::mutex> lock(gmsh_mutex);
    GmshSession session;
    gmsh::model::add("sphere");
    gmsh::model::occ::addSphere(0, 0, 0, radius);
    gmsh::model::occ::synchronize();
    gmsh::option::setNumber("Mesh.MeshSizeMin", h);
    gmsh::option::setNumber("Mesh.MeshSizeMax", h);
    gmsh::option::setNumber("Mesh.MeshSizeFromCurvature", 0);
    gmsh::model::mesh::generate(2);
    Mesh mesh = mesh_from_gmsh_model("gmsh sphere h=" + std::to_string(h));
    // OpenCASCADE's seam nodes are duplicated per curve; welding by coordinates closes the surface.
    Mesh welded;
    welded.source = mesh.source;
    Welder welder;
    for (const auto& t : mesh.triangles) {
        std::array<std::int32_t, 3> w{};
        for (int v = 0; v < 3; ++v) w[v] = welder.add(welded, mesh.vertices[t[v]][0], mesh.vertices[t[v]][1], mesh.vertices[t[v]][2]);
        welded.triangles.push_back(w);
    }
    return welded;
}
#else  // BEM_WITHOUT_GMSH: a build for machines without the Gmsh SDK (the GPU bundle's bem_multi_check)

Mesh read_msh(const std::string& path) { fail(path, "gmsh", "this program was built without the Gmsh SDK"); }

Mesh make_gmsh_sphere(double, double) { throw MeshError("gmsh sphere: this program was built without the Gmsh SDK"); }

#endif

Mesh make_geodesic_sphere(int m, double radius) {
    if (m < 1 || m > 20000) throw MeshError("geodesic sphere: frequency must be 1..20000");
    if (!(radius > 0)) throw MeshError("geodesic sphere: radius must be positive");
    const Mesh base = make_refined_sphere(0, 1.0);  // the icosahedron, outward faces
    Mesh mesh;
    mesh.source = "geodesic sphere frequency " + std::to_string(m);
    mesh.vertices = base.vertices;
    mesh.vertices.reserve(std::size_t(10) * m * m + 2);
    mesh.triangles.reserve(std::size_t(20) * m * m);
    auto project = [radius](std::array<double, 3> v) {
        const double r = norm(v);
        return std::array<double, 3>{radius * v[0] / r, radius * v[1] / r, radius * v[2] / r};
    };
    for (auto& v : mesh.vertices) v = project(v);
    auto point = [&](int a, int b, int c, int i, int j) {  // (A (m - i - j) + B i + C j) / m on the face, projected
        std::array<double, 3> p{};
        for (int x = 0; x < 3; ++x)
            p[x] = (base.vertices[a][x] * (m - i - j) + base.vertices[b][x] * i + base.vertices[c][x] * j) / m;
        return project(p);
    };
    // Points inside an edge are shared by its two faces: keyed by (lower vertex, higher vertex, steps from the lower).
    std::map<std::array<int, 3>, int> edge_points;
    auto on_edge = [&](int a, int b, int t) {  // t steps of m from a towards b, 0 < t < m
        const std::array<int, 3> key = a < b ? std::array<int, 3>{a, b, t} : std::array<int, 3>{b, a, m - t};
        auto it = edge_points.find(key);
        if (it != edge_points.end()) return it->second;
        mesh.vertices.push_back(point(key[0], key[1], key[1], key[2], 0));
        const int id = int(mesh.vertices.size()) - 1;
        edge_points.emplace(key, id);
        return id;
    };
    for (const auto& f : base.triangles) {
        const int A = f[0], B = f[1], C = f[2];
        std::vector<int> grid(std::size_t(m + 1) * std::size_t(m + 1), -1);  // (i, j) with i + j <= m
        auto at = [&](int i, int j) -> int& { return grid[std::size_t(i) * std::size_t(m + 1) + std::size_t(j)]; };
        for (int i = 0; i <= m; ++i)
            for (int j = 0; i + j <= m; ++j) {
                int id;
                if (i == 0 && j == 0) id = A;
                else if (i == m) id = B;
                else if (j == m) id = C;
                else if (j == 0) id = on_edge(A, B, i);
                else if (i == 0) id = on_edge(A, C, j);
                else if (i + j == m) id = on_edge(B, C, j);
                else {
                    mesh.vertices.push_back(point(A, B, C, i, j));
                    id = int(mesh.vertices.size()) - 1;
                }
                at(i, j) = id;
            }
        // Both kinds of small triangle keep the face's (outward) orientation.
        for (int i = 0; i < m; ++i)
            for (int j = 0; i + j < m; ++j) {
                mesh.triangles.push_back({at(i, j), at(i + 1, j), at(i, j + 1)});
                if (i + j < m - 1) mesh.triangles.push_back({at(i + 1, j), at(i + 1, j + 1), at(i, j + 1)});
            }
    }
    return mesh;
}

Mesh make_refined_sphere(int level, double radius, SphereBase base) {
    if (level < 0 || level > 9) throw MeshError("refined sphere: level must be 0..9");
    Mesh mesh;
    if (base == SphereBase::icosahedron) {
        const double p = (1 + std::sqrt(5.0)) / 2;
        mesh.vertices = {{-1, p, 0}, {1, p, 0}, {-1, -p, 0}, {1, -p, 0}, {0, -1, p}, {0, 1, p},
                         {0, -1, -p}, {0, 1, -p}, {p, 0, -1}, {p, 0, 1}, {-p, 0, -1}, {-p, 0, 1}};
        mesh.triangles = {{0, 11, 5}, {0, 5, 1},  {0, 1, 7},   {0, 7, 10}, {0, 10, 11}, {1, 5, 9}, {5, 11, 4},
                          {11, 10, 2}, {10, 7, 6}, {7, 1, 8},  {3, 9, 4},  {3, 4, 2},   {3, 2, 6}, {3, 6, 8},
                          {3, 8, 9},  {4, 9, 5},  {2, 4, 11}, {6, 2, 10}, {8, 6, 7},   {9, 8, 1}};
        mesh.source = "icosphere level " + std::to_string(level);
    } else {
        mesh.vertices = {{1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, -1}};
        mesh.triangles = {{0, 2, 4}, {2, 1, 4}, {1, 3, 4}, {3, 0, 4}, {2, 0, 5}, {1, 2, 5}, {3, 1, 5}, {0, 3, 5}};
        mesh.source = "octasphere level " + std::to_string(level);
    }
    auto project = [radius](std::array<double, 3> v) {
        const double r = norm(v);
        return std::array<double, 3>{radius * v[0] / r, radius * v[1] / r, radius * v[2] / r};
    };
    for (auto& v : mesh.vertices) v = project(v);
    for (int l = 0; l < level; ++l) {
        std::map<std::pair<int, int>, int> midpoint;
        auto mid = [&](int a, int b) {
            auto key = std::minmax(a, b);
            auto it = midpoint.find(key);
            if (it != midpoint.end()) return it->second;
            const auto& va = mesh.vertices[a];
            const auto& vb = mesh.vertices[b];
            mesh.vertices.push_back(project({va[0] + vb[0], va[1] + vb[1], va[2] + vb[2]}));
            const int id = int(mesh.vertices.size()) - 1;
            midpoint.emplace(key, id);
            return id;
        };
        std::vector<std::array<std::int32_t, 3>> refined;
        refined.reserve(4 * mesh.triangles.size());
        for (const auto& t : mesh.triangles) {
            const int ab = mid(t[0], t[1]), bc = mid(t[1], t[2]), ca = mid(t[2], t[0]);
            refined.push_back({t[0], ab, ca});
            refined.push_back({ab, t[1], bc});
            refined.push_back({ca, bc, t[2]});
            refined.push_back({ab, bc, ca});
        }
        mesh.triangles = std::move(refined);
    }
    return mesh;
}

double parse_unit(const std::string& unit) {
    if (unit == "m") return 1.0;
    if (unit == "cm") return 1e-2;
    if (unit == "mm") return 1e-3;
    throw std::invalid_argument("--unit: expected m, cm or mm, got '" + unit + "'");
}

Mesh read_mesh(const std::string& path, double unit_scale) {
    const auto dot_pos = path.find_last_of('.');
    const std::string ext = dot_pos == std::string::npos ? "" : lower(path.substr(dot_pos + 1));
    Mesh mesh;
    if (ext == "ply") mesh = read_ply(path);
    else if (ext == "stl") mesh = read_stl(path);
    else if (ext == "msh") mesh = read_msh(path);
    else fail(path, "extension", "unknown mesh format (expected .ply, .stl or .msh)");
    for (auto& v : mesh.vertices)
        for (double& c : v) c *= unit_scale;
    return mesh;
}

void write_ply_ascii(const Mesh& mesh, const std::string& path, const batchsolve::io::OutputOptions& rules) {
    batchsolve::io::OutputStream file(path, rules);  // checked temporary, renamed over the target
    std::ostream& out = file.stream();
    out << "ply\nformat ascii 1.0\ncomment " << mesh.source << "\nelement vertex " << mesh.vertices.size()
        << "\nproperty double x\nproperty double y\nproperty double z\nelement face " << mesh.triangles.size()
        << "\nproperty list uchar int vertex_indices\nend_header\n";
    out.precision(17);
    for (const auto& v : mesh.vertices) out << v[0] << ' ' << v[1] << ' ' << v[2] << '\n';
    for (const auto& t : mesh.triangles) out << "3 " << t[0] << ' ' << t[1] << ' ' << t[2] << '\n';
    file.commit();
}

MeshStats mesh_stats(const Mesh& mesh) {
    MeshStats s;
    s.min_edge = std::numeric_limits<double>::infinity();
    double edge_sum = 0;
    for (const auto& t : mesh.triangles) {
        const auto& a = mesh.vertices[t[0]];
        const auto& b = mesh.vertices[t[1]];
        const auto& c = mesh.vertices[t[2]];
        for (double e : {norm(sub(b, a)), norm(sub(c, b)), norm(sub(a, c))}) {
            edge_sum += e;
            s.max_edge = std::max(s.max_edge, e);
            s.min_edge = std::min(s.min_edge, e);
        }
        const auto n = cross(sub(b, a), sub(c, a));
        s.area += 0.5 * norm(n);
        s.volume += dot(a, cross(b, c)) / 6.0;
    }
    s.mean_edge = mesh.triangles.empty() ? 0 : edge_sum / (3.0 * double(mesh.triangles.size()));
    for (const auto& v : mesh.vertices) s.max_radius = std::max(s.max_radius, norm(v));
    return s;
}

double elements_per_wavelength(const MeshStats& stats, double wavenumber) {
    return (2 * M_PI / wavenumber) / stats.mean_edge;
}

SurfaceReport check_surface(Mesh& mesh) {
    const std::string& file = mesh.source;
    SurfaceReport report;
    if (mesh.triangles.empty()) fail(file, "mesh", "no triangles");
    const std::size_t nv = mesh.vertices.size();
    const MeshStats stats = mesh_stats(mesh);
    // Degenerate: repeated vertex or an area below 1e-10 of the square of the longest edge.
    for (std::size_t t = 0; t < mesh.triangles.size(); ++t) {
        const auto& tri = mesh.triangles[t];
        for (int v = 0; v < 3; ++v)
            if (tri[v] < 0 || std::size_t(tri[v]) >= nv) fail(file, "triangle " + std::to_string(t), "vertex index out of range");
        if (tri[0] == tri[1] || tri[1] == tri[2] || tri[0] == tri[2])
            fail(file, "triangle " + std::to_string(t), "degenerate: a vertex repeats");
        const auto& a = mesh.vertices[tri[0]];
        const auto& b = mesh.vertices[tri[1]];
        const auto& c = mesh.vertices[tri[2]];
        const double longest = std::max({norm(sub(b, a)), norm(sub(c, b)), norm(sub(a, c))});
        const double area = 0.5 * norm(cross(sub(b, a), sub(c, a)));
        if (!(area > 1e-10 * longest * longest))
            fail(file, "triangle " + std::to_string(t), "degenerate: zero area (collinear vertices)");
    }
    // Duplicates: the same vertex set twice, in any order.
    {
        std::map<std::array<std::int32_t, 3>, std::size_t> seen;
        for (std::size_t t = 0; t < mesh.triangles.size(); ++t) {
            auto key = mesh.triangles[t];
            std::sort(key.begin(), key.end());
            auto [it, inserted] = seen.emplace(key, t);
            if (!inserted)
                fail(file, "triangle " + std::to_string(t), "duplicate of triangle " + std::to_string(it->second));
        }
    }
    // Closed and consistently oriented: each edge in exactly two triangles, traversed once each way.
    {
        std::map<std::pair<std::int32_t, std::int32_t>, std::vector<std::size_t>> directed;
        for (std::size_t t = 0; t < mesh.triangles.size(); ++t)
            for (int e = 0; e < 3; ++e) directed[{mesh.triangles[t][e], mesh.triangles[t][(e + 1) % 3]}].push_back(t);
        for (const auto& [edge, tris] : directed) {
            const std::string where = "triangle " + std::to_string(tris[0]) + ", edge (" + std::to_string(edge.first) + ", " +
                                      std::to_string(edge.second) + ")";
            auto opposite = directed.find({edge.second, edge.first});
            const std::size_t same = tris.size(), other = opposite == directed.end() ? 0 : opposite->second.size();
            if (same + other > 2) fail(file, where, "non-manifold: the edge belongs to " + std::to_string(same + other) + " triangles");
            if (same == 2) fail(file, where, "inconsistent orientation: triangles " + std::to_string(tris[0]) + " and " + std::to_string(tris[1]) + " traverse the edge the same way");
            if (other == 0) fail(file, where, "open surface: the edge belongs to one triangle only");
        }
    }
    if (stats.volume < 0) {
        for (auto& t : mesh.triangles) std::swap(t[1], t[2]);
        report.flipped_to_outward = true;
    }
    // Drop vertices no triangle uses (they would give empty rows in P1 matrices).
    std::vector<std::int32_t> remap(nv, -1);
    std::vector<std::array<double, 3>> used;
    for (auto& t : mesh.triangles)
        for (auto& v : t) {
            if (remap[v] < 0) { remap[v] = std::int32_t(used.size()); used.push_back(mesh.vertices[v]); }
            v = remap[v];
        }
    report.removed_unused_vertices = nv - used.size();
    mesh.vertices = std::move(used);
    return report;
}

}  // namespace bem
