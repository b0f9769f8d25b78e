;;; write.el --- an agent's approved write lands in the open buffer -*- lexical-binding: t -*-
;; The file's first line asks for a task whose agent replaces text in it; the user has an unsaved
;; line of their own at the end; the approval (a diagnostic, as for every eglot approval) is
;; decided with its code action. Reported: the buffer, the disk, the diff opened for review, and
;; what one undo takes back.
(load (expand-file-name "common.el" (file-name-directory load-file-name)) nil t)

(defun buckley-flymake-diagnostics ()
  (with-current-buffer (find-buffer-visiting (getenv "BUCKLEY_FILE"))
    (mapcar #'flymake-diagnostic-text (flymake-diagnostics))))

(defun buckley-first-line ()
  (goto-char (point-min))
  (cons (line-beginning-position) (line-end-position)))

(buckley-finish
 (lambda ()
   (let* ((server (buckley-start))
          (buffer (current-buffer)))
     ;; The user's own line, unsaved, as an undo step of its own.
     (goto-char (point-max))
     (insert "// mine, unsaved\n")
     (undo-boundary)
     (let ((line (buckley-first-line)))
       (buckley-run-code-action server (car line) (cdr line) "Buckley: run task «REPLACE"))
     (buckley-wait "the approval diagnostic"
                   (lambda () (seq-find (lambda (text) (string-match-p "Write retry\\.ts" text)) (buckley-flymake-diagnostics))))
     ;; The change opens for review beside it (window/showDocument).
     (buckley-note "diff" (with-current-buffer
                              (buckley-wait "the diff of the change"
                                            (lambda () (seq-find (lambda (b) (string-match-p "buckley-lsp/changes/.*\\.diff\\'" (or (buffer-file-name b) ""))) (buffer-list))))
                            (buffer-string)))
     (with-current-buffer buffer
       (let ((line (buckley-first-line)))
         (buckley-run-code-action server (car line) (cdr line) "Buckley: approve «Write retry.ts»")))
     (buckley-wait "the agent's change in the buffer"
                   (lambda () (with-current-buffer buffer (save-excursion (goto-char (point-min)) (search-forward "tries = 5): Promise<T> {" nil t)))))
     (with-current-buffer buffer
       (buckley-note "buffer" (buffer-string))
       (buckley-note "modified" (buffer-modified-p))
       (undo-boundary)
       (let ((last-command nil)) (undo))
       (buckley-note "afterUndo" (buffer-string)))
     (eglot-shutdown server))))
