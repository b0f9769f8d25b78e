/**
 * Enough of a POSIX shell parser to see what a command line runs: its simple commands, their
 * words after quote removal, redirections, pipelines, here-documents, and the scripts inside
 * command and process substitutions (`$(…)`, backticks, `<(…)`). Expansions are kept as written
 * (`$HOME`, `*.log`): the rules decide what they may mean. It never executes anything and never
 * fails: unbalanced quotes run to the end of the text.
 */

export interface Redirect {
  /** `>`, `>>`, `>|`, `&>`, `&>>`, `>&`, `<`, `<<`, `<<<`, `<>`, `<&`. */
  op: string;
  /** The file (or descriptor, for `>&2`) as written. */
  target: string;
}

export interface SimpleCommand {
  /** The words after quote removal; a word holding a substitution keeps its text, e.g. `$(curl x)`. */
  words: string[];
  redirects: Redirect[];
  /** The commands before this one in its pipeline: what feeds its standard input. */
  feeders: SimpleCommand[];
  /** Here-document and here-string bodies fed to it. */
  stdinText: string[];
  /** The commands of the substitutions in its words and redirections. */
  substitutions: SimpleCommand[];
  /** The working directory the script changed to before it (`cd dir && …`), as written. */
  cd?: string;
}

/** Past this, a script is not read further (and the rules treat it as unreadable). */
export const MAX_SCRIPT_CHARS = 64 * 1024;
const MAX_DEPTH = 8;

/** Every simple command of `script`, substitutions first-class (they run too). */
export function parseShell(script: string, depth = 0): SimpleCommand[] {
  return new Parser(script.slice(0, MAX_SCRIPT_CHARS), depth).parse();
}

/** All commands, those inside substitutions included, in one flat list. */
export function allCommands(commands: SimpleCommand[]): SimpleCommand[] {
  return commands.flatMap((command) => [command, ...allCommands(command.substitutions)]);
}

const RESERVED = new Set(['if', 'then', 'else', 'elif', 'fi', 'do', 'done', 'while', 'until', 'esac', '!', '{', '}', 'time', 'coproc']);

class Parser {
  private i = 0;
  private command = newCommand();
  private pipeline: SimpleCommand[] = [];
  private readonly commands: SimpleCommand[] = [];
  private word = '';
  private inWord = false;
  /** Here-documents whose bodies start at the next line. */
  private heredocs: { delimiter: string; stripTabs: boolean; command: SimpleCommand }[] = [];
  private cd: string | undefined;

  constructor(
    private readonly text: string,
    private readonly depth: number,
  ) {}

  parse(): SimpleCommand[] {
    const { text } = this;
    while (this.i < text.length) {
      const char = text[this.i]!;
      switch (char) {
        case ' ':
        case '\t':
          this.endWord();
          this.i++;
          break;
        case '\n':
          this.endWord();
          this.endCommand(true);
          this.i++;
          this.readHeredocs();
          break;
        case '#':
          if (this.inWord) this.append(char, 1);
          else this.skipComment();
          break;
        case '\\':
          if (text[this.i + 1] === '\n') this.i += 2;
          else this.append(text[this.i + 1] ?? '', 2);
          break;
        case "'":
          this.singleQuoted();
          break;
        case '"':
          this.doubleQuoted();
          break;
        case '`':
          this.backticks();
          break;
        case '$':
          this.dollar();
          break;
        case ';':
          this.endWord();
          this.endCommand(true);
          this.i += text[this.i + 1] === ';' ? 2 : 1;
          break;
        case '&':
          if (text[this.i + 1] === '>') {
            this.redirect(text[this.i + 2] === '>' ? '&>>' : '&>');
          } else {
            this.endWord();
            this.endCommand(true);
            this.i += text[this.i + 1] === '&' ? 2 : 1;
          }
          break;
        case '|':
          this.endWord();
          if (text[this.i + 1] === '|') {
            this.endCommand(true);
            this.i += 2;
          } else {
            this.endCommand(false);
            this.i += text[this.i + 1] === '&' ? 2 : 1;
          }
          break;
        case '(':
        case ')':
          // Subshells and groupings: only the commands inside matter.
          this.endWord();
          this.endCommand(true);
          this.i++;
          break;
        case '<':
        case '>':
          if (text[this.i + 1] === '(') this.processSubstitution();
          else this.redirectAt();
          break;
        default:
          this.append(char, 1);
      }
    }
    this.endWord();
    this.endCommand(true);
    return this.commands;
  }

  private append(chars: string, advance: number): void {
    this.word += chars;
    this.inWord = true;
    this.i += advance;
  }

  private endWord(): void {
    if (!this.inWord) return;
    const word = this.word;
    this.word = '';
    this.inWord = false;
    const { command } = this;
    // Reserved words and assignments at the start of a command are not its program.
    if (command.words.length === 0 && command.redirects.length === 0 && (RESERVED.has(word) || /^[A-Za-z_][A-Za-z0-9_]*=/.test(word))) return;
    command.words.push(word);
  }

  /** Ends the simple command; `sequence` ends its pipeline too (`;`, `&&`, `&`, newline). */
  private endCommand(sequence: boolean): void {
    const { command } = this;
    const used = command.words.length > 0 || command.redirects.length > 0;
    if (used) {
      // Loop headers (`for x in a b`, `case $x in`) run nothing themselves.
      const head = command.words[0];
      if (head === 'for' || head === 'select' || head === 'case' || head === 'function') {
        command.words = [];
      } else {
        if (this.cd !== undefined) command.cd = this.cd;
        command.feeders = [...this.pipeline];
        this.commands.push(command);
        if (head === 'cd' && sequence) {
          const target = command.words[1] ?? '~';
          this.cd = this.cd === undefined || /^[/~$]/.test(target) ? target : `${this.cd}/${target}`;
        }
      }
    }
    if (sequence) this.pipeline = [];
    else if (used) this.pipeline.push(command);
    this.command = newCommand();
  }

  private skipComment(): void {
    const end = this.text.indexOf('\n', this.i);
    this.i = end === -1 ? this.text.length : end;
  }

  private singleQuoted(): void {
    const end = this.text.indexOf("'", this.i + 1);
    const stop = end === -1 ? this.text.length : end;
    this.append(this.text.slice(this.i + 1, stop), 0);
    this.i = stop + 1;
  }

  private doubleQuoted(): void {
    const { text } = this;
    this.i++;
    this.inWord = true;
    while (this.i < text.length && text[this.i] !== '"') {
      const char = text[this.i]!;
      if (char === '\\' && '"\\$`\n'.includes(text[this.i + 1] ?? '')) {
        if (text[this.i + 1] !== '\n') this.word += text[this.i + 1];
        this.i += 2;
      } else if (char === '$') {
        this.dollar();
      } else if (char === '`') {
        this.backticks();
      } else {
        this.word += char;
        this.i++;
      }
    }
    this.i++;
  }

  /** `$(…)` (parsed), `$((…))` (arithmetic), `${…}`, `$NAME`: kept as written in the word. */
  private dollar(): void {
    const { text } = this;
    const next = text[this.i + 1];
    if (next === '(' && text[this.i + 2] !== '(') {
      const end = matching(text, this.i + 1, '(', ')');
      this.substitute(text.slice(this.i + 2, end));
      this.append(text.slice(this.i, end + 1), 0);
      this.i = end + 1;
    } else if (next === '(' || next === '{') {
      const end = matching(text, this.i + 1, next, next === '(' ? ')' : '}');
      this.append(text.slice(this.i, end + 1), 0);
      this.i = end + 1;
    } else {
      this.append('$', 1);
    }
  }

  private backticks(): void {
    const { text } = this;
    let end = this.i + 1;
    while (end < text.length && text[end] !== '`') end += text[end] === '\\' ? 2 : 1;
    this.substitute(text.slice(this.i + 1, end).replace(/\\([`\\$])/g, '$1'));
    this.append(text.slice(this.i, end + 1), 0);
    this.i = end + 1;
  }

  /** `<(…)` / `>(…)`: a word naming what the inner script reads or writes. */
  private processSubstitution(): void {
    const end = matching(this.text, this.i + 1, '(', ')');
    this.substitute(this.text.slice(this.i + 2, end));
    this.append(this.text.slice(this.i, end + 1), 0);
    this.i = end + 1;
  }

  private substitute(script: string): void {
    if (this.depth >= MAX_DEPTH) return;
    this.command.substitutions.push(...parseShell(script, this.depth + 1));
  }

  /** A redirection starting at `<` or `>` (a descriptor number just before it belongs to it). */
  private redirectAt(): void {
    const { text } = this;
    if (/^\d+$/.test(this.word)) {
      this.word = '';
      this.inWord = false;
    } else {
      this.endWord();
    }
    const three = text.slice(this.i, this.i + 3);
    const two = text.slice(this.i, this.i + 2);
    if (three === '<<<') return this.redirect('<<<');
    if (three === '<<-') return this.redirect('<<-');
    for (const op of ['>>', '>|', '>&', '<<', '<&', '<>']) if (two === op) return this.redirect(op);
    this.redirect(text[this.i]!);
  }

  private redirect(op: string): void {
    this.endWord();
    this.i += op.length;
    while (this.text[this.i] === ' ' || this.text[this.i] === '\t') this.i++;
    // The target is one word, read with the same rules (quotes, substitutions).
    const outer = { word: this.word, inWord: this.inWord };
    this.word = '';
    this.inWord = false;
    while (this.i < this.text.length && !' \t\n;&|()<>'.includes(this.text[this.i]!)) {
      const char = this.text[this.i]!;
      if (char === "'") this.singleQuoted();
      else if (char === '"') this.doubleQuoted();
      else if (char === '$') this.dollar();
      else if (char === '`') this.backticks();
      else if (char === '\\') this.append(this.text[this.i + 1] ?? '', 2);
      else this.append(char, 1);
    }
    const target = this.word;
    this.word = outer.word;
    this.inWord = outer.inWord;
    if (op === '<<' || op === '<<-') {
      this.heredocs.push({ delimiter: target, stripTabs: op === '<<-', command: this.command });
    } else if (op === '<<<') {
      this.command.stdinText.push(target);
    } else {
      this.command.redirects.push({ op, target });
    }
  }

  private readHeredocs(): void {
    for (const { delimiter, stripTabs, command } of this.heredocs.splice(0)) {
      const lines: string[] = [];
      while (this.i < this.text.length) {
        const end = this.text.indexOf('\n', this.i);
        const stop = end === -1 ? this.text.length : end;
        const line = this.text.slice(this.i, stop);
        this.i = stop + 1;
        if ((stripTabs ? line.replace(/^\t+/, '') : line) === delimiter) break;
        lines.push(line);
      }
      command.stdinText.push(lines.join('\n'));
    }
  }
}

function newCommand(): SimpleCommand {
  return { words: [], redirects: [], feeders: [], stdinText: [], substitutions: [] };
}

/** The index of the bracket closing the one at `open`, minding quotes and nesting (or the end). */
function matching(text: string, open: number, opener: string, closer: string): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const char = text[i];
    if (char === '\\') i++;
    else if (char === "'") {
      const end = text.indexOf("'", i + 1);
      i = end === -1 ? text.length : end;
    } else if (char === opener) depth++;
    else if (char === closer && --depth === 0) return i;
  }
  return text.length;
}
