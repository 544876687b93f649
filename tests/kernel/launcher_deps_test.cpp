// The launcher must stay small and auditable (architecture.md): none of the
// compiler's libraries may be among its DT_NEEDED entries. The ELF file is
// parsed here directly, so the test does not depend on readelf/ldd output.
#include <doctest/doctest.h>
#include <elf.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

std::vector<char> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in, "cannot open ", path);
  return {std::istreambuf_iterator<char>(in), {}};
}

// Copies a T from the file at `offset`, failing the test if it is out of range.
template <typename T>
T at(const std::vector<char>& file, uint64_t offset) {
  REQUIRE_MESSAGE((offset <= file.size() && file.size() - offset >= sizeof(T)), "offset ", offset, " out of range");
  T value;
  std::memcpy(&value, file.data() + offset, sizeof(T));
  return value;
}

// File offset of a virtual address, through the PT_LOAD segment holding it.
uint64_t file_offset(const std::vector<Elf64_Phdr>& phdrs, uint64_t vaddr) {
  for (const Elf64_Phdr& ph : phdrs)
    if (ph.p_type == PT_LOAD && vaddr >= ph.p_vaddr && vaddr - ph.p_vaddr < ph.p_filesz)
      return ph.p_offset + (vaddr - ph.p_vaddr);
  FAIL("address ", vaddr, " is in no PT_LOAD segment");
  return 0;
}

std::vector<std::string> needed_libraries(const std::vector<char>& file) {
  const auto ehdr = at<Elf64_Ehdr>(file, 0);
  REQUIRE(std::memcmp(ehdr.e_ident, ELFMAG, SELFMAG) == 0);
  REQUIRE(ehdr.e_ident[EI_CLASS] == ELFCLASS64);
  REQUIRE(ehdr.e_ident[EI_DATA] == ELFDATA2LSB);
  REQUIRE(ehdr.e_phentsize == sizeof(Elf64_Phdr));

  std::vector<Elf64_Phdr> phdrs;
  for (unsigned i = 0; i < ehdr.e_phnum; ++i)
    phdrs.push_back(at<Elf64_Phdr>(file, ehdr.e_phoff + uint64_t(i) * sizeof(Elf64_Phdr)));
  const auto dynamic = std::find_if(phdrs.begin(), phdrs.end(), [](const Elf64_Phdr& ph) { return ph.p_type == PT_DYNAMIC; });
  REQUIRE_MESSAGE(dynamic != phdrs.end(), "no PT_DYNAMIC: the launcher is expected to be dynamically linked");

  std::vector<uint64_t> needed_offsets;
  uint64_t strtab = 0;
  for (uint64_t off = dynamic->p_offset; off + sizeof(Elf64_Dyn) <= dynamic->p_offset + dynamic->p_filesz;
       off += sizeof(Elf64_Dyn)) {
    const auto dyn = at<Elf64_Dyn>(file, off);
    if (dyn.d_tag == DT_NULL) break;
    if (dyn.d_tag == DT_NEEDED) needed_offsets.push_back(dyn.d_un.d_val);
    if (dyn.d_tag == DT_STRTAB) strtab = dyn.d_un.d_ptr;
  }
  REQUIRE_MESSAGE(strtab != 0, "no DT_STRTAB");
  const uint64_t strtab_offset = file_offset(phdrs, strtab);

  std::vector<std::string> names;
  for (uint64_t name : needed_offsets) {
    const uint64_t start = strtab_offset + name;
    REQUIRE(start < file.size());
    const void* end = std::memchr(file.data() + start, '\0', file.size() - start);
    REQUIRE(end != nullptr);
    names.emplace_back(file.data() + start, static_cast<const char*>(end));
  }
  return names;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return s;
}

}  // namespace

TEST_CASE("aasm-launch needs libc and none of the compiler's libraries") {
  const char* launcher = std::getenv("AASM_LAUNCH");
  REQUIRE_MESSAGE(launcher, "AASM_LAUNCH is not set (run through meson test)");
  const std::vector<std::string> needed = needed_libraries(read_file(launcher));

  std::string listing;
  for (const std::string& name : needed) listing += name + " ";
  INFO("DT_NEEDED: ", listing);
  // Positive control: the parser found the real entries.
  CHECK(std::any_of(needed.begin(), needed.end(), [](const std::string& n) { return n.rfind("libc.so", 0) == 0; }));
  for (const std::string& name : needed)
    for (const char* banned : {"llvm", "yaml-cpp", "antlr4", "seccomp"})
      CHECK_MESSAGE(lower(name).find(banned) == std::string::npos, name, " must not be linked into aasm-launch");
}
