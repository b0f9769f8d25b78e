;;; common.el --- shared by the Emacs tests -*- lexical-binding: t -*-
;; The server command, the fixture and where to write the result come from the environment.
;; Every step waits on what Emacs shows (a buffer, a message, a diagnostic) with a deadline, and
;; the result is written as JSON for test/emacs/emacs.test.ts.
(require 'eglot)
(require 'json)

(defvar buckley-result (make-hash-table :test 'equal))
(defun buckley-note (key value) (puthash key value buckley-result))
(defun buckley-write-result ()
  (with-temp-file (getenv "BUCKLEY_RESULT") (insert (json-encode buckley-result))))

(defun buckley-wait (what predicate &optional seconds)
  "Run the event loop until PREDICATE returns non-nil, or fail naming WHAT."
  (let ((deadline (+ (float-time) (or seconds 30))) value)
    (while (and (not (setq value (funcall predicate))) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (unless value (error "Timed out waiting for %s" what))
    value))

(defun buckley-messages ()
  (with-current-buffer (messages-buffer) (buffer-string)))

(defun buckley-start ()
  "Open the fixture in js-mode with buckley-lsp as its eglot server; return the server."
  (setq eglot-sync-connect t eglot-autoshutdown t)
  ;; The fixture's directory is the project (the workspace root), with or without a git checkout.
  (let ((root (file-name-directory (getenv "BUCKLEY_FILE"))))
    (add-hook 'project-find-functions (lambda (_dir) (cons 'transient root))))
  ;; The README's eglot block as a user's init (buckley-lsp on PATH), or the built server.
  (if (getenv "BUCKLEY_README_INIT")
      (load (getenv "BUCKLEY_README_INIT") nil t)
    (add-to-list 'eglot-server-programs
                 `(js-mode . ,(list (getenv "BUCKLEY_NODE") (getenv "BUCKLEY_BIN") "--stdio"))))
  (find-file (getenv "BUCKLEY_FILE"))
  (js-mode)
  ;; What M-x eglot does (eglot-ensure waits for a command loop, which batch mode has not).
  (apply #'eglot (eglot--guess-contact))
  (buckley-wait "eglot to connect" #'eglot-current-server))

(defun buckley-code-actions (server beg end)
  "The code actions the server offers for BEG..END, as eglot lists them."
  (jsonrpc-request server :textDocument/codeAction
                   (list :textDocument (eglot--TextDocumentIdentifier)
                         :range (list :start (eglot--pos-to-lsp-position beg)
                                      :end (eglot--pos-to-lsp-position end))
                         :context (list :diagnostics []))))

(defun buckley-run-code-action (server beg end title)
  "Pick the code action whose title starts with TITLE, as M-x eglot-code-actions does, and run it."
  (let* ((actions (buckley-code-actions server beg end))
         (action (seq-find (lambda (action) (string-prefix-p title (plist-get action :title))) actions)))
    (unless action (error "No %S among %S" title (mapcar (lambda (a) (plist-get a :title)) actions)))
    ;; eglot 1.17 runs an action with `eglot-execute'; 1.9 (Debian 12) runs its command with `eglot-execute-command'.
    (if (fboundp 'eglot-execute)
        (eglot-execute server action)
      (let ((command (if (stringp (plist-get action :command)) action (plist-get action :command))))
        (eglot-execute-command server (plist-get command :command) (plist-get command :arguments))))
    actions))

(defun buckley-select-backoff ()
  "The two lines of `backoff', as (BEG . END)."
  (goto-char (point-min))
  (search-forward "export function backoff")
  (cons (line-beginning-position) (progn (forward-line 1) (line-end-position))))

(defun buckley-answer-document ()
  "The buffer of the answer document window/showDocument opened, if any."
  (seq-find (lambda (buffer) (string-match-p "buckley-lsp/answers/.*\\.md\\'" (or (buffer-file-name buffer) "")))
            (buffer-list)))

;; "Buckley: explain this" on the lines of `backoff', its one-line message, and hover there: what
;; explain.el (eglot 1.17) and summary.el (eglot 1.9) share.
(defun buckley-explain (server)
  "Run \"Buckley: explain this\" on `backoff' with SERVER; note the server's name and the actions offered."
  (let ((lines (buckley-select-backoff)))
    (buckley-note "server" (plist-get (eglot--server-info server) :name))
    (buckley-note "actions" (mapcar (lambda (action) (plist-get action :title))
                                    (buckley-run-code-action server (car lines) (cdr lines) "Buckley: explain this")))))

(defun buckley-note-message (regexp)
  "Wait for the answer's one-line message, the first match of REGEXP in *Messages*, and note it."
  (buckley-note "message"
                (buckley-wait "the answer's one-line message"
                              (lambda () (let ((messages (buckley-messages)))
                                           (when (string-match regexp messages) (match-string 0 messages)))))))

(defun buckley-note-hover (server)
  "Note what SERVER's hover gives over the asked lines."
  (with-current-buffer (find-buffer-visiting (getenv "BUCKLEY_FILE"))
    (goto-char (point-min))
    (search-forward "return 2 ** attempt")
    (let ((hover (jsonrpc-request server :textDocument/hover (eglot--TextDocumentPositionParams))))
      (buckley-note "hover" (plist-get (plist-get hover :contents) :value)))))

(defun buckley-finish (body)
  "Run BODY, note an error if it fails, and write the result with the *Messages* log."
  (condition-case err (funcall body)
    (error (buckley-note "error" (error-message-string err))))
  (buckley-note "messages" (buckley-messages))
  (buckley-write-result)
  (kill-emacs 0))
