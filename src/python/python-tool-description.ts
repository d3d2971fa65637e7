/** What the model reads about the python tool by default (packages and input files are added). */
export const BASE_DESCRIPTION =
  'Run Python 3 code in an isolated sandbox (no network, no files outside /tmp, limited time and memory) ' +
  'and return what it prints to stdout. ' +
  'Charts: matplotlib figures left open (or shown with plt.show()) are shown to the user as PNG images. ' +
  'Files saved under /tmp/outputs/ are offered to the user as downloads.';

/** The default base text for a sandbox that may reach some hosts (`egress`). */
const NETWORK_BASE = BASE_DESCRIPTION.replace(
  'no network, ',
  'network only to the hosts named below, ',
);

/**
 * What the sandbox may reach, as the python tool tells the model (`DockerSandbox.network`).
 *
 * @example
 * ```ts
 * const network: PythonNetwork = { allow: ['pypi.org', 'files.pythonhosted.org'], pip: true };
 * ```
 */
export type PythonNetwork = {
  /** The allow-list as written (`pypi.org`, `*.example.com:8443`). */
  readonly allow: readonly string[];
  /** Whether `pip install` can reach a package index (pip is configured to use it). */
  readonly pip: boolean;
};

// Libraries people ask for by name first; the rest of the image follows alphabetically.
const HEADLINERS = ['numpy', 'pandas', 'matplotlib', 'scipy', 'pillow', 'sympy'];

/**
 * The python tool's description: the base text, the image's packages (so the model does not
 * try one that is missing, or pip) and where input files are.
 *
 * @example
 * ```ts
 * pythonToolDescription({ packages: ['pandas==1.5.3'], inputFiles: true });
 * ```
 */
export function pythonToolDescription({
  base = BASE_DESCRIPTION,
  packages,
  inputFiles = false,
  stateful = false,
  network,
}: {
  /** The text before the package list. */
  base?: string;
  /** `name==version` entries, e.g. from `DockerSandbox.packages`. */
  packages?: readonly string[] | undefined;
  /** Whether the app places files under /tmp/inputs. */
  inputFiles?: boolean;
  /** Whether calls are cells of one interpreter per conversation. */
  stateful?: boolean;
  /** What the sandbox may reach (its egress policy); undefined: nothing. */
  network?: PythonNetwork | undefined;
}): string {
  const parts = [network !== undefined && base === BASE_DESCRIPTION ? NETWORK_BASE : base];
  if (packages !== undefined && packages.length > 0) {
    const rank = (entry: string) => {
      const index = HEADLINERS.indexOf(entry.split('==')[0]!.toLowerCase());
      return index < 0 ? HEADLINERS.length : index;
    };
    const sorted = [...packages].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
    parts.push(
      `Installed Python packages: ${sorted.map(entry => entry.replace('==', ' ')).join(', ')}.` +
        (network === undefined
          ? ' Nothing else can be installed (no pip, no network).'
          : network.pip
            ? ''
            : ' Nothing else can be installed (no package index is reachable).'),
    );
  }
  if (network !== undefined) {
    parts.push(
      `Only these hosts can be reached, through the HTTP(S) proxy the environment names: ${network.allow.join(', ')}; ` +
        'other connections are refused and DNS does not resolve.' +
        (network.pip
          ? ' Install a missing package with a line `%pip install NAME` in the code (wheels only; ' +
            (stateful
              ? 'it stays installed for later calls).'
              : 'the same code can import it after).')
          : ''),
    );
  }
  if (stateful) {
    parts.push(
      'Calls in this conversation run like notebook cells in one interpreter: variables, imports ' +
        'and files under /tmp stay from earlier calls, so do not repeat earlier code. As in ' +
        'Jupyter, the value of the last expression is shown (a DataFrame as a table) and ' +
        'display(x) shows more values.',
    );
  } else {
    parts.push('Print the values you need.');
  }
  if (inputFiles) {
    parts.push('Files the user shared are in /tmp/inputs/ (the conversation names them).');
  }
  return parts.join(' ');
}
