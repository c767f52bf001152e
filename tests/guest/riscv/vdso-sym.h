/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vdso-sym.h: the address of a function the vDSO exports, for the guest
 * programs of tests/guest/riscv (header only: build-guest.sh compiles each
 * .c file of this directory as a program of its own).
 */
#ifndef NVLAB_VDSO_SYM_H
#define NVLAB_VDSO_SYM_H

#include <elf.h>
#include <stdint.h>
#include <string.h>
#include <sys/auxv.h>

/* @want in the dynamic symbol table of the vDSO, or NULL */
static void *vdso_sym(const char *want)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)getauxval(AT_SYSINFO_EHDR);
	const Elf64_Phdr *ph;
	const Elf64_Dyn *dyn = NULL;
	const Elf64_Sym *sym = NULL;
	const char *str = NULL;
	const Elf64_Word *hash = NULL;
	uintptr_t base = 0;
	int have_load = 0;

	if (!eh || memcmp(eh->e_ident, ELFMAG, SELFMAG))
		return NULL;
	ph = (const Elf64_Phdr *)((const char *)eh + eh->e_phoff);
	for (int i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type == PT_LOAD && !have_load) {
			base = (uintptr_t)eh + ph[i].p_offset - ph[i].p_vaddr;
			have_load = 1;
		} else if (ph[i].p_type == PT_DYNAMIC) {
			dyn = (const Elf64_Dyn *)((const char *)eh + ph[i].p_offset);
		}
	}
	if (!have_load || !dyn)
		return NULL;
	for (; dyn->d_tag != DT_NULL; dyn++) {
		if (dyn->d_tag == DT_SYMTAB)
			sym = (const Elf64_Sym *)(base + dyn->d_un.d_ptr);
		else if (dyn->d_tag == DT_STRTAB)
			str = (const char *)(base + dyn->d_un.d_ptr);
		else if (dyn->d_tag == DT_HASH)
			hash = (const Elf64_Word *)(base + dyn->d_un.d_ptr);
	}
	if (!sym || !str || !hash)
		return NULL;
	/* DT_HASH: nbucket, nchain; nchain is the number of symbols */
	for (Elf64_Word i = 0; i < hash[1]; i++) {
		if (sym[i].st_shndx == SHN_UNDEF || ELF64_ST_TYPE(sym[i].st_info) != STT_FUNC)
			continue;
		if (!strcmp(str + sym[i].st_name, want))
			return (void *)(base + sym[i].st_value);
	}
	return NULL;
}

#endif /* NVLAB_VDSO_SYM_H */
