/**
 * The names each public entry exports, values and types alike, as the TypeScript compiler sees
 * them from the entry's source: what a merchant can import.
 */
import ts from 'typescript';

export interface EntryExports {
  values: string[];
  types: string[];
}

export function entryExports(files: string[]): Record<string, EntryExports> {
  const program = ts.createProgram(files, {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    strict: true,
    noEmit: true,
    skipLibCheck: true,
  });
  const checker = program.getTypeChecker();
  const result: Record<string, EntryExports> = {};
  for (const file of files) {
    const source = program.getSourceFile(file);
    const symbol = source && checker.getSymbolAtLocation(source);
    if (!symbol) throw new Error(`no module symbol for ${file}`);
    const values: string[] = [];
    const types: string[] = [];
    for (const exported of checker.getExportsOfModule(symbol)) {
      const target = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      const typeOnly = exported.declarations?.some(
        (d) => ts.isExportSpecifier(d) && (d.isTypeOnly || d.parent.parent.isTypeOnly),
      );
      if (!typeOnly && target.flags & ts.SymbolFlags.Value) values.push(exported.name);
      else types.push(exported.name);
    }
    result[file] = { values: values.sort(), types: types.sort() };
  }
  return result;
}
