/**
 * Images a prompt carries (a screenshot pasted in an ACP client's panel). On the wire — to a
 * coordinator that announces `prompt_images` — each is a related document of the editor context
 * marked with `IMAGE_KEY` in its metadata: its content the image's bytes in base64, its
 * `language_id` the image's MIME type. The prompt's text names them; the agent gets them as ACP
 * image blocks, a model as image parts of its message.
 */
import type { DocumentSnapshot, EditorContext } from './contract.js';

/** Our extension: a related document's metadata key marking it an image (its value: `base64`). */
export const IMAGE_KEY = 'buckley.image';

/** The most image data (base64) one prompt carries: an image past it is left out, and said. */
export const MAX_PROMPT_IMAGE_BYTES = 20 * 1024 * 1024;

const MIME_TYPE = /^image\/[a-z0-9.+-]+$/i;

export interface PromptImage {
  /** Its MIME type (`image/png`). */
  mimeType: string;
  /** Its bytes, base64. */
  data: string;
  /** Where it came from, where the client said (a file, a URL). */
  uri?: string;
}

export function isImageDocument(doc: DocumentSnapshot): boolean {
  return doc.metadata?.[IMAGE_KEY] === 'base64';
}

/** The image as a related document of the context (`workspace`: the request's workspace URI). */
export function imageDocument(image: PromptImage, workspace: string): DocumentSnapshot {
  return { uri: image.uri ?? '', language_id: image.mimeType, content: image.data, version: 0, workspace_root: workspace, metadata: { [IMAGE_KEY]: 'base64' } };
}

/** The images a context carries that an agent can be given (a MIME type of an image, data in base64), in order. */
export function imagesOf(context: EditorContext | undefined): PromptImage[] {
  return (context?.related_documents ?? []).flatMap((doc) =>
    isImageDocument(doc) && MIME_TYPE.test(doc.language_id) && doc.content ? [{ mimeType: doc.language_id.toLowerCase(), data: doc.content, ...(doc.uri ? { uri: doc.uri } : {}) }] : [],
  );
}

/** The images within the prompt's bound, in order; and how many were left out past it. */
export function withinImageBound(images: PromptImage[], bound = MAX_PROMPT_IMAGE_BYTES): { kept: PromptImage[]; leftOut: number } {
  const kept: PromptImage[] = [];
  let room = bound;
  for (const image of images) {
    if (image.data.length > room) continue;
    room -= image.data.length;
    kept.push(image);
  }
  return { kept, leftOut: images.length - kept.length };
}

/** The image's name as a person reads it: its file's name, else its type. */
export function imageName(image: PromptImage): string {
  const last = image.uri?.split(/[/\\]/).pop();
  return last && !image.uri?.startsWith('data:') ? last : `a ${image.mimeType.replace(/^image\//, '').toUpperCase()} image`;
}
