export { CatalogFormatError } from './catalog-format-error.ts';
export { DimensionMismatchError } from './dimension-mismatch-error.ts';
export { DuplicateToolError } from './duplicate-tool-error.ts';
export { InvalidArgumentError } from './invalid-argument-error.ts';
export { ToolbeltError } from './toolbelt-error.ts';
export { UsageError } from './usage-error.ts';
