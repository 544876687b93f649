// The launcher must stay small and auditable (docs/architecture.md): it is a
// static PIE (no loader, no shared library resolved at each launch: about
// 0.1 ms of every launch, docs/benchmarks.md), so it has no PT_INTERP and no
// DT_NEEDED entry, and none of the compiler's libraries may be linked into
// it, which its symbol table shows. The ELF file is parsed here directly, so
// the test does not depend on readelf/ldd output.
#include <doctest/doctest.h>
#include <elf.h>

#include <algorithm>
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

struct Elf {
  std::vector<Elf64_Phdr> phdrs;
  std::vector<Elf64_Shdr> shdrs;
};

Elf parse_headers(const std::vector<char>& file) {
  const auto ehdr = at<Elf64_Ehdr>(file, 0);
  REQUIRE(std::memcmp(ehdr.e_ident, ELFMAG, SELFMAG) == 0);
  REQUIRE(ehdr.e_ident[EI_CLASS] == ELFCLASS64);
  REQUIRE(ehdr.e_phentsize == sizeof(Elf64_Phdr));
  REQUIRE(ehdr.e_shentsize == sizeof(Elf64_Shdr));
  Elf elf;
  for (unsigned i = 0; i < ehdr.e_phnum; ++i)
    elf.phdrs.push_back(at<Elf64_Phdr>(file, ehdr.e_phoff + uint64_t(i) * sizeof(Elf64_Phdr)));
  for (unsigned i = 0; i < ehdr.e_shnum; ++i)
    elf.shdrs.push_back(at<Elf64_Shdr>(file, ehdr.e_shoff + uint64_t(i) * sizeof(Elf64_Shdr)));
  return elf;
}

// Every name in .symtab (the full symbol table: what was linked in).
std::vector<std::string> symbol_names(const std::vector<char>& file, const Elf& elf) {
  std::vector<std::string> names;
  for (const Elf64_Shdr& section : elf.shdrs) {
    if (section.sh_type != SHT_SYMTAB) continue;
    REQUIRE(section.sh_link < elf.shdrs.size());
    const Elf64_Shdr& strings = elf.shdrs[section.sh_link];
    for (uint64_t off = section.sh_offset; off + sizeof(Elf64_Sym) <= section.sh_offset + section.sh_size;
         off += sizeof(Elf64_Sym)) {
      const auto symbol = at<Elf64_Sym>(file, off);
      const uint64_t start = strings.sh_offset + symbol.st_name;
      REQUIRE(start < file.size());
      const void* end = std::memchr(file.data() + start, '\0', file.size() - start);
      REQUIRE(end != nullptr);
      names.emplace_back(file.data() + start, static_cast<const char*>(end));
    }
  }
  return names;
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
  if (dynamic == phdrs.end()) return {};  // fully static

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


}  // namespace

TEST_CASE("aasm-launch is a static PIE with none of the compiler's libraries in it") {
  const char* launcher = std::getenv("AASM_LAUNCH");
  REQUIRE_MESSAGE(launcher, "AASM_LAUNCH is not set (run through meson test)");
  const std::vector<char> file = read_file(launcher);
  const Elf elf = parse_headers(file);

  const auto ehdr = at<Elf64_Ehdr>(file, 0);
  CHECK_MESSAGE(ehdr.e_type == ET_DYN, "not position-independent: the launcher's code would have no ASLR");
  CHECK_MESSAGE(std::none_of(elf.phdrs.begin(), elf.phdrs.end(), [](const Elf64_Phdr& ph) { return ph.p_type == PT_INTERP; }),
                "PT_INTERP: the launcher would be started through the dynamic loader");
  std::string listing;
  for (const std::string& name : needed_libraries(file)) listing += name + " ";
  CHECK_MESSAGE(listing.empty(), "DT_NEEDED: ", listing);

  const std::vector<std::string> symbols = symbol_names(file, elf);
  // Positive controls: the table was read, and libc is in it.
  REQUIRE_MESSAGE(std::any_of(symbols.begin(), symbols.end(), [](const std::string& n) { return n.rfind("_ZN4aasm6launch", 0) == 0; }),
                  "aasm::launch not found: no symbol table (stripped?) or a parser fault");
  CHECK(std::any_of(symbols.begin(), symbols.end(), [](const std::string& n) { return n == "prctl"; }));
  for (const std::string& name : symbols)
    for (const char* banned : {"_ZN4llvm", "_ZN4YAML", "antlr4", "seccomp_rule_add", "seccomp_init"})
      CHECK_MESSAGE(name.find(banned) == std::string::npos, name, " must not be linked into aasm-launch");
}
